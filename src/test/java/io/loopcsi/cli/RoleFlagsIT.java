package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import csi.v1.GetCapacityRequest;
import csi.v1.GetPluginInfoRequest;
import csi.v1.NodeGetInfoRequest;
import csi.v1.NodeGetInfoResponse;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.Topology;
import csi.v1.VolumeCapability;
import io.loopcsi.csi.Endpoint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.engine.PoolLock;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.node.pluginregistration.InfoRequest;
import io.loopcsi.node.pluginregistration.PluginInfo;
import io.loopcsi.node.pluginregistration.RegistrationGrpc;
import io.loopcsi.node.pluginregistration.RegistrationStatus;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.Launcher;

/**
 * Every documented flag of every role, given to the packaged launcher (./loopcsi) as the README
 * and --help document it, and seen to take effect. The operator, controller and node roles need
 * an API server: they run with kube-testenv (LOOPCSI_KUBE_TEST=1, as `make test` and CI arrange).
 */
class RoleFlagsIT {

    static final long GI = 1L << 30;
    static KubernetesClient kube;

    @TempDir
    Path dir;

    static boolean cluster() {
        return "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
    }

    @BeforeAll
    static void crds() throws Exception {
        // the CRDs must be established before a role's informers list their objects
        if (!cluster()) {
            System.out.println("RoleFlagsIT: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset): the operator, controller and"
                    + " node flags are skipped; `make test-kube` runs them");
            return;
        }
        kube = new KubernetesClientBuilder().build();
        for (String crd : List.of("storagepools", "loopvolumes", "loopsnapshots", "loopgroupsnapshots", "looppoolnodes")) {
            if (kube.apiextensions().v1().customResourceDefinitions().withName(crd + ".loopcsi.io").get() != null) {
                continue; // installed by an earlier test (kubectl apply -k kubernetes/)
            }
            try (InputStream in = Files.newInputStream(Path.of("crds", crd + ".loopcsi.io-v1.yml"))) {
                kube.apiextensions().v1().customResourceDefinitions().load(in).create();
            }
        }
        for (String crd : List.of("storagepools", "loopvolumes", "loopsnapshots", "loopgroupsnapshots", "looppoolnodes")) {
            await(() -> kube.apiextensions().v1().customResourceDefinitions().withName(crd + ".loopcsi.io").get().getStatus().getConditions()
                    .stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")) ? true : null);
        }
    }

    @AfterAll
    static void close() {
        if (kube != null) {
            kube.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, "flags").delete();
            kube.close();
        }
    }

    @Test
    void helpListsEveryFlagOfEveryRole() throws Exception {
        for (String h : List.of("--help", "-h")) {
            Launcher.Result r = Launcher.run(h);
            assertEquals(0, r.exit(), r.out());
            for (String flag : List.of("--endpoint", "--data-dir", "--capacity", "--node-id", "--driver-name", "--max-volumes",
                    "--allowed-roots", "--http-address", "--namespace", "--pool", "--node-name", "--registration-socket",
                    "standalone", "operator", "controller", "node", "csc")) {
                assertTrue(r.out().contains(flag), flag + " in --help");
            }
        }
        Launcher.Result bad = Launcher.run("node", "--no-such-flag", "x");
        assertEquals(64, bad.exit());
        assertTrue(bad.out().contains("unknown flag --no-such-flag"), bad.out());
        Launcher.Result tcp = Launcher.run("controller", "--endpoint", "tcp://127.0.0.1:1", "--pool", "p");
        assertEquals(64, tcp.exit(), "the controller role serves CSI on a unix socket only");
    }

    @Test
    void standaloneFlags() throws Exception {
        Path sock = dir.resolve("csi.sock");
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        try (Launcher l = Launcher.start(dir, "standalone", List.of("standalone", "--endpoint", "unix://" + sock, "--data-dir",
                dir.resolve("pool").toString(), "--capacity", "3Gi", "--node-id", "flag-node", "--driver-name", "flags.example.io",
                "--max-volumes", "7", "--allowed-roots", mnt.toString()), Map.of()).awaitCsi(sock);
                CsiClient c = new CsiClient(sock)) {
            assertEquals("flags.example.io", c.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
            NodeGetInfoResponse info = c.node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
            assertEquals("flag-node", info.getNodeId());
            assertEquals(7, info.getMaxVolumesPerNode());
            assertEquals(3 * GI, c.controller.getCapacity(GetCapacityRequest.getDefaultInstance()).getAvailableCapacity());
            assertTrue(Files.isDirectory(dir.resolve("pool/volumes")), "--data-dir holds the pool");
            StatusRuntimeException outside = assertThrows(StatusRuntimeException.class, () -> c.node.nodeStageVolume(stage(dir.resolve("elsewhere"))));
            assertEquals(Status.Code.INVALID_ARGUMENT, outside.getStatus().getCode());
            assertTrue(outside.getStatus().getDescription().contains("--allowed-roots"), outside.getStatus().getDescription());
        }
    }

    @Test
    void operatorFlags() throws Exception {
        assumeTrue(cluster(), "needs a test cluster");
        String http = "127.0.0.1:" + Launcher.freePort();
        try (Launcher l = Launcher.start(dir, "operator", List.of("operator", "--namespace", "flags-ns", "--http-address", http), Map.of())) {
            l.awaitHttp(http, "/q/health/live");
            assertTrue(l.log().contains("namespace flags-ns"), l.log());
            assertFalse(l.log().contains("SRCFG"), l.log());
            assertFalse(Files.exists(dir.resolve("data")), "the operator opens no pool directory");
        }
    }

    @Test
    void controllerFlags() throws Exception {
        assumeTrue(cluster(), "needs a test cluster");
        node("flags", "flag-node-b", 5 * GI);
        Path sock = dir.resolve("controller/csi.sock");
        String http = "127.0.0.1:" + Launcher.freePort();
        try (Launcher l = Launcher.start(dir, "controller", List.of("controller", "--endpoint", "unix://" + sock, "--driver-name",
                "flags.loopcsi.io", "--pool", "flags", "--http-address", http), Map.of()).awaitCsi(sock);
                CsiClient c = new CsiClient(sock)) {
            assertEquals("flags.loopcsi.io", c.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
            long avail = c.controller.getCapacity(GetCapacityRequest.newBuilder().setAccessibleTopology(
                    Topology.newBuilder().putSegments("topology.loopcsi.io/node", "flag-node-b")).build()).getAvailableCapacity();
            assertEquals(5 * GI, avail, "--pool: the capacity the pool's node published");
            l.awaitHttp(http, "/q/health/live");
            assertEquals(200, Launcher.httpStatus(http, "/q/metrics"));
            assertCsiRefusedOnTcp(http);
            assertFalse(Files.exists(dir.resolve("data")), "the controller opens no pool directory");
        }
    }

    @Test
    void nodeFlags() throws Exception {
        assumeTrue(cluster(), "needs a test cluster");
        Path sock = dir.resolve("plugins/flags.loopcsi.io/csi.sock");
        Path reg = dir.resolve("plugins_registry/flags.loopcsi.io-reg.sock");
        Path kubelet = Files.createDirectories(dir.resolve("kubelet"));
        String http = "127.0.0.1:" + Launcher.freePort();
        // the pool is still held (as by an updated DaemonSet's old pod that is stopping): the node waits, says so, then starts
        try (PoolLock held = PoolLock.acquire(dir.resolve("pool"));
                Launcher l = Launcher.start(dir, "node", List.of("node", "--endpoint", "unix://" + sock, "--driver-name", "flags.loopcsi.io",
                "--pool", "flags", "--node-name", "flag-node-a", "--data-dir", dir.resolve("pool").toString(), "--capacity", "2Gi",
                "--registration-socket", reg.toString(), "--http-address", http, "--max-volumes", "5", "--allowed-roots", kubelet.toString()),
                Map.of());
                CsiClient c = new CsiClient(sock)) {
            await(() -> l.log().contains("is locked by PID " + ProcessHandle.current().pid() + "; waiting for it") ? true : null);
            assertTrue(l.isAlive() && !Files.exists(sock), "waiting, not serving:\n" + l.log());
            held.close();
            l.awaitCsi(sock);
            NodeGetInfoResponse info = c.node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
            assertEquals("flag-node-a", info.getNodeId());
            assertEquals(5, info.getMaxVolumesPerNode());
            assertEquals("flag-node-a", info.getAccessibleTopology().getSegmentsMap().get("topology.loopcsi.io/node"));
            assertTrue(Files.isDirectory(dir.resolve("pool/volumes")), "--data-dir holds the pool");
            LoopPoolNode published = await(() -> kube.resources(LoopPoolNode.class).withName("flags.flag-node-a").get());
            assertEquals(2 * GI, published.getStatus().getTotalBytes(), "--capacity");
            assertEquals("flags.loopcsi.io", published.getSpec().getDriver());
            StatusRuntimeException outside = assertThrows(StatusRuntimeException.class, () -> c.node.nodeStageVolume(stage(dir.resolve("x"))));
            assertTrue(outside.getStatus().getDescription().contains("--allowed-roots"), outside.getStatus().getDescription());

            // --registration-socket: kubelet's plugin watcher asks GetInfo, then tells the outcome
            ManagedChannel ch = CsiChannels.open(Endpoint.parse("unix://" + reg));
            try {
                RegistrationGrpc.RegistrationBlockingStub r = RegistrationGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
                PluginInfo pi = r.getInfo(InfoRequest.getDefaultInstance());
                assertEquals("CSIPlugin", pi.getType());
                assertEquals("flags.loopcsi.io", pi.getName());
                assertEquals(sock.toString(), pi.getEndpoint());
                assertEquals(List.of("1.0.0"), pi.getSupportedVersionsList());
                r.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(true).build());
            } finally {
                ch.shutdownNow();
            }
            l.awaitHttp(http, "/q/health/live");
            assertCsiRefusedOnTcp(http);
            // the node's pool and its calls on /q/metrics (docs/metrics.md), labelled with --driver-name and --node-name
            String metrics = new String(java.net.URI.create("http://" + http + "/q/metrics").toURL().openStream().readAllBytes());
            assertTrue(metrics.lines().anyMatch(line -> line.startsWith("loopcsi_pool_capacity_bytes{") && line.contains("driver=\"flags.loopcsi.io\"")
                    && line.contains("node=\"flag-node-a\"") && line.endsWith(" " + (double) (2 * GI))), metrics);
            assertTrue(metrics.lines().anyMatch(line -> line.startsWith("loopcsi_csi_requests_total{") && line.contains("method=\"NodeGetInfo\"")
                    && line.contains("code=\"OK\"") && line.endsWith(" 1.0")), metrics);
            StatusRuntimeException other = assertThrows(StatusRuntimeException.class,
                    () -> c.controller.getCapacity(GetCapacityRequest.getDefaultInstance()));
            assertEquals(Status.Code.UNIMPLEMENTED, other.getStatus().getCode(), "the Controller service is the controller role's");
        }
        assertFalse(Files.exists(reg), "the registration socket goes with the process");
    }

    /** A gRPC call over TCP never reaches a CSI service: only /q/ is served there. */
    static void assertCsiRefusedOnTcp(String http) {
        ManagedChannel ch = CsiChannels.open(Endpoint.parse("tcp://" + http));
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> csi.v1.IdentityGrpc.newBlockingStub(ch)
                    .withDeadlineAfter(10, TimeUnit.SECONDS).getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
            assertNotEquals(Status.Code.OK, e.getStatus().getCode());
        } finally {
            ch.shutdownNow();
        }
    }

    static NodeStageVolumeRequest stage(Path staging) {
        return NodeStageVolumeRequest.newBuilder().setVolumeId("vol-00000000000000000000000000000000").setStagingTargetPath(staging.toString())
                .setVolumeCapability(VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("xfs"))
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)))
                .build();
    }

    static void node(String pool, String node, long available) {
        String name = HandoffNames.poolNode(pool, node);
        LoopPoolNode n = new LoopPoolNode(name, new LoopPoolNodeSpec(pool, pool + ".loopcsi.io", node));
        n.getMetadata().setLabels(HandoffNames.labels(pool, node));
        if (kube.resources(LoopPoolNode.class).withName(name).get() == null) {
            kube.resource(n).create();
        }
        LoopPoolNodeStatus s = new LoopPoolNodeStatus();
        s.setTotalBytes(available);
        s.setAvailableBytes(available);
        s.setHeartbeatTime(Instant.now().plusSeconds(3600).toString());
        n.setStatus(s);
        kube.resources(LoopPoolNode.class).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), n);
    }

    static <T> T await(java.util.function.Supplier<T> check) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                T v = check.get();
                if (v != null) {
                    return v;
                }
            } catch (RuntimeException notYet) {
                // retry
            }
            Thread.sleep(200);
        }
        throw new AssertionError("timed out");
    }
}
