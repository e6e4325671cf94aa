package io.loopcsi.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;


import csi.v1.ProbeRequest;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.SidecarRequests;
import csi.v1.ControllerExpandVolumeResponse;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.kube.Kubectl;
import io.loopcsi.operator.status.Conditions;

/**
 * The whole product on a real kubelet (kube-testenv up --with-node: kubelet + containerd), as an
 * admin meets it: the image {@code make image} built, installed exactly as the README says
 * ({@code kubectl apply -k kubernetes/}), a node labelled, {@code kubernetes/examples/storagepool.yaml}
 * applied. The standard CSI sidecar images cannot be pulled here: stand-ins with their names
 * that only sleep ({@code make standin-images}) take their place, and the steps that need their
 * work will make their calls themselves.
 *
 * <p>Run by {@code make e2e} (.ci/e2e.sh: builds the images, starts the node, loads the images,
 * sets LOOPCSI_E2E=1 and KUBECONFIG, tears everything down afterwards); never by {@code make test}
 * (the class name matches neither surefire's nor failsafe's patterns). Timings go to stdout.
 *
 * <p>The only thing the test adds to the cluster is what kube-proxy would do in a real one: the
 * {@code kubernetes} Service routes to the API server ({@link KubernetesServiceRoute}), so the
 * pods run unchanged.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProductOnNodeE2E {

    static final String NS = "loopcsi-system";
    static final String NODE = "kube-testenv-node";
    static final String POOL = "local";
    static final String DRIVER = POOL + ".loopcsi.io";
    static final Duration WAIT = Duration.ofSeconds(240);

    static KubernetesClient kube;
    static KubernetesServiceRoute route;
    static ImageArchive loopcsi;
    /** The native image: what the pool's controller and node components run (spec.runtime native, the default). */
    static ImageArchive loopcsiNative;
    static Map<String, ImageArchive> standIns;
    static final Map<String, Duration> TIMINGS = new LinkedHashMap<>();
    static boolean operatorRunning;

    @BeforeAll
    static void cluster() throws IOException {
        boolean configured = "1".equals(System.getenv("LOOPCSI_E2E")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED ProductOnNodeE2E: no test node (LOOPCSI_E2E=1 and KUBECONFIG unset); run `make e2e`");
        }
        assumeTrue(configured, "no test node: run `make e2e`");
        Files.deleteIfExists(Path.of("target/e2e/restart-timings.tsv"));
        loopcsi = ImageArchive.read(Path.of("target/loopcsi-image.tar"));
        loopcsiNative = ImageArchive.read(Path.of("target/loopcsi-native-image.tar"));
        try (Stream<Path> tars = Files.list(Path.of("target/standin-images"))) {
            standIns = tars.filter(p -> p.toString().endsWith(".tar")).map(ImageArchive::read)
                    .collect(Collectors.toMap(ImageArchive::name, a -> a));
        }
        kube = new KubernetesClientBuilder().build();
        Service api = kube.services().inNamespace("default").withName("kubernetes").get();
        route = KubernetesServiceRoute.start(api.getSpec().getClusterIP(), api.getSpec().getPorts().get(0).getPort(),
                kube.getConfiguration().getMasterUrl());
    }

    @AfterAll
    static void report() {
        TIMINGS.forEach((what, d) -> System.out.printf("e2e timing: %-60s %6.1f s%n", what, d.toMillis() / 1000.0));
        if (kube != null) {
            printMemory();
        }
        if (route != null) {
            route.close();
        }
        if (socketLinks != null) {
            io.loopcsi.testing.KernelCleanup.deleteTree(socketLinks);
        }
        if (kube != null) {
            kube.close();
        }
    }

    @Test
    @Order(1)
    void theBuiltImagesAreOnTheNode() {
        Set<String> onNode = kube.nodes().withName(NODE).get().getStatus().getImages().stream()
                .flatMap(i -> i.getNames().stream()).collect(Collectors.toSet());
        assertTrue(onNode.contains(loopcsi.name()), loopcsi.name() + " on the node: " + onNode);
        assertTrue(onNode.contains(loopcsiNative.name()), loopcsiNative.name() + " on the node: " + onNode);
        assertTrue(standIns.size() >= 3, "stand-ins for the sidecars: " + standIns.keySet());
        for (String standIn : standIns.keySet()) {
            assertTrue(onNode.contains(standIn), standIn + " on the node: " + onNode);
        }
    }

    @Test
    @Order(2)
    void theOperatorRunsFromTheBuiltImageInstalledAsTheReadmeSays() {
        long t0 = System.nanoTime();
        Kubectl.ok("apply", "-k", "kubernetes/");
        await("operator Deployment available", () -> {
            kube.pods().inNamespace(NS).withLabel("app.kubernetes.io/component", "operator").list().getItems()
                    .forEach(p -> failIfRestarted(p, "operator"));
            Deployment d = kube.apps().deployments().inNamespace(NS).withName("loopcsi-operator").get();
            return d != null && d.getStatus() != null && Integer.valueOf(1).equals(d.getStatus().getAvailableReplicas());
        });
        timing("operator Ready after kubectl apply -k kubernetes/", t0);

        Pod pod = onePod("app.kubernetes.io/component", "operator");
        ContainerStatus operator = container(pod, "operator").orElseThrow();
        assertEquals(loopcsi.name(), operator.getImage());
        assertEquals(loopcsi.id(), operator.getImageID(), "the operator runs the image make image built");
        assertTrue(operator.getReady(), "operator ready (its readiness probe: /q/health/ready)");
        assertEquals(0, operator.getRestartCount(), "operator never restarted: " + logs(pod, "operator", true));
        assertCleanLog(logs(pod, "operator", false));
        operatorRunning = true;
    }

    @Test
    @Order(3)
    void aPoolRollsOutOntoTheLabelledNodeFromTheBuiltImages() {
        assumeTrue(operatorRunning, "the operator does not run (see the test before)");
        Kubectl.ok("label", "node", NODE, "loopcsi.io/storage=true", "--overwrite");
        long t0 = System.nanoTime();
        Kubectl.ok("apply", "-f", "kubernetes/examples/storagepool.yaml");

        await("pool reconciled, the labelled node its one node", () -> {
            StoragePool p = kube.resources(StoragePool.class).withName(POOL).get();
            return p != null && p.getStatus() != null && p.getMetadata().getGeneration().equals(p.getStatus().getObservedGeneration())
                    && Integer.valueOf(1).equals(p.getStatus().getDesiredNodes());
        });
        timing("pool reconciled with its one node (status) after kubectl apply", t0);
        await("CSIDriver " + DRIVER, () -> kube.storage().v1().csiDrivers().withName(DRIVER).get());
        for (String sc : List.of("loopcsi-xfs", "loopcsi-block")) {
            assertEquals(DRIVER, await("StorageClass " + sc, () -> kube.storage().v1().storageClasses().withName(sc).get()).getProvisioner());
        }

        Pod node = await("node plugin pod scheduled on " + NODE, () -> {
            Pod p = podWith("app.kubernetes.io/component", "node");
            return p != null && NODE.equals(p.getSpec().getNodeName()) ? p : null;
        });
        timing("node plugin pod scheduled after kubectl apply", t0);
        // the pool's components run the native image (spec.runtime native, the default), the operator the JVM's
        await("node plugin's loopcsi container started from the built native image", () -> {
            Pod p = kube.pods().inNamespace(NS).withName(node.getMetadata().getName()).get();
            failIfImageMissing(p);
            return container(p, "loopcsi").filter(c -> loopcsiNative.id().equals(c.getImageID())).isPresent();
        });
        timing("node plugin's loopcsi container created after kubectl apply", t0);

        Pod controller = await("controller pod scheduled", () -> {
            Pod p = podWith("app.kubernetes.io/component", "controller");
            return p != null && NODE.equals(p.getSpec().getNodeName()) ? p : null;
        });
        await("controller's stand-in sidecars running", () -> {
            Pod p = kube.pods().inNamespace(NS).withName(controller.getMetadata().getName()).get();
            failIfImageMissing(p);
            List<ContainerStatus> sidecars = p.getStatus().getContainerStatuses().stream().filter(c -> !c.getName().equals("loopcsi")).toList();
            return !sidecars.isEmpty() && sidecars.stream().allMatch(c -> c.getState().getRunning() != null
                    && standIns.containsKey(c.getImage()) && standIns.get(c.getImage()).id().equals(c.getImageID()));
        });
        Pod sidecarsUp = kube.pods().inNamespace(NS).withName(controller.getMetadata().getName()).get();
        for (ContainerStatus c : sidecarsUp.getStatus().getContainerStatuses()) {
            if (!c.getName().equals("loopcsi")) {
                failIfRestarted(sidecarsUp, c.getName());
                String log = logs(sidecarsUp, c.getName(), false);
                // the stand-in checked the flags and env the operator gave it against the release's -h (standin-entrypoint.sh)
                assertTrue(log.contains("every flag is one") || log.contains("not known here"), c.getName() + ": " + log);
                System.out.println("e2e: " + c.getName() + " (" + c.getImage() + "): " + log.strip().replace('\n', ' '));
            }
        }
        await("controller's loopcsi container started from the built native image", () -> container(
                kube.pods().inNamespace(NS).withName(controller.getMetadata().getName()).get(), "loopcsi")
                .filter(c -> loopcsiNative.id().equals(c.getImageID())).isPresent());
        timing("controller pod's containers created after kubectl apply", t0);
    }

    // The steps. The sidecars are stand-ins that sleep: their part (GetCapacity and the
    // CSIStorageCapacity objects, CreateVolume, ControllerExpandVolume, CreateSnapshot, DeleteVolume,
    // and the PV objects they write) is done here on the controller pod's own CSI socket (the node is
    // this machine: the socket is in the pod's emptyDir), with the requests the releases the operator
    // deployed for this 1.20 server send, built as their source builds them (SidecarRequests:
    // csi-provisioner v2.1.2, csi-resizer v1.1.0, csi-snapshotter v4.0.0). Everything on the node is
    // kubelet's own work: registration, stage, publish, expand, unpublish, unstage.

    static final String TOPOLOGY_KEY = "topology.loopcsi.io/node";
    static final String BACKING_DIR = "/var/lib/loopcsi/local";
    static final long GI = 1L << 30;
    /** The application pods run the built image too: it has sh, df, dd and blockdev. */
    static final Map<String, String> VOLUMES = new LinkedHashMap<>(); // claim -> CSI volume ID
    static final Map<String, String> CONTAINER_LOGS = new LinkedHashMap<>();
    static String snapshotId;

    @Test
    @Order(10)
    void step1_poolReadyNodePluginRegisteredWithKubeletCapacityPublished() {
        assumeTrue(operatorRunning, "the operator does not run");
        long t0 = System.nanoTime();
        await("pool Ready=True", () -> {
            StoragePool p = kube.resources(StoragePool.class).withName(POOL).get();
            return p.getStatus() != null && Conditions.isTrue(p.getStatus().getConditions(), Conditions.READY);
        });
        timing("pool Ready=True (after the rollout)", t0);
        var driver = await("CSINode " + NODE + " lists " + DRIVER + " (kubelet registered the node plugin)", () -> {
            var csiNode = kube.storage().v1().csiNodes().withName(NODE).get();
            return csiNode == null ? null : csiNode.getSpec().getDrivers().stream().filter(d -> d.getName().equals(DRIVER)).findFirst().orElse(null);
        });
        timing("node plugin registered with kubelet (CSINode)", t0);
        assertEquals(List.of(TOPOLOGY_KEY), driver.getTopologyKeys());
        assertEquals(NODE, driver.getNodeID());
        assertEquals(NODE, kube.nodes().withName(NODE).get().getMetadata().getLabels().get(TOPOLOGY_KEY), "kubelet labelled the node with the topology");
        LoopPoolNodeStatus capacity = await("the node's capacity published", () -> {
            LoopPoolNode n = kube.resources(LoopPoolNode.class).withName(HandoffNames.poolNode(POOL, NODE)).get();
            return n == null ? null : n.getStatus();
        });
        assertEquals(50 * GI, capacity.getTotalBytes(), "capacityPerNode of the example pool");

        // the transfer server as the operator deploys it (issue 35): kubelet projected the pod-bound token
        // (audience loopcsi.io/transfer, 600 s) and gave the pod its IP, the node role started the server
        // and published where peers call it (the pod IP, the DaemonSet's port) and the certificate to pin
        Pod nodePod = podWith("app.kubernetes.io/component", "node");
        LoopPoolNodeStatus served = await("the node publishes its transfer endpoint", () -> {
            LoopPoolNodeStatus st = kube.resources(LoopPoolNode.class).withName(HandoffNames.poolNode(POOL, NODE)).get().getStatus();
            return st != null && st.getTransferAddress() != null && st.getTransferCertificateSha256() != null ? st : null;
        });
        String podIp = kube.pods().inNamespace(NS).withName(nodePod.getMetadata().getName()).get().getStatus().getPodIP();
        assertEquals(podIp + ":9810", served.getTransferAddress(), "the pod IP (downward API) and the transfer port");
        assertTrue(served.getTransferCertificateSha256().matches("[0-9a-f]{64}"), served.getTransferCertificateSha256());
        assertTrue(nodePod.getSpec().getVolumes().stream().anyMatch(v -> v.getProjected() != null && v.getProjected().getSources().stream()
                .anyMatch(x -> x.getServiceAccountToken() != null && "loopcsi.io/transfer".equals(x.getServiceAccountToken().getAudience()))),
                "the token kubelet projected is the operator's");
        StoragePool pool = await("the pool sums it", () -> {
            StoragePool p = kube.resources(StoragePool.class).withName(POOL).get();
            return Integer.valueOf(1).equals(p.getStatus().getReportingNodes()) ? p : null;
        });
        assertEquals("50Gi", pool.getStatus().getCapacity());
        assertTrue(Kubectl.ok("get", "storagepool", POOL).contains("50Gi"), "kubectl get storagepool shows the capacity");
        publishCapacityAsTheProvisionerDoes();
    }

    @Test
    @Order(11)
    void step2_xfsClaimBoundPodRunningDataWritten() {
        assumeTrue(operatorRunning, "the operator does not run");
        long t0 = System.nanoTime();
        claim("data", "loopcsi-xfs", "1Gi", "Filesystem");
        // a non-root application with an fsGroup (issue 15): kubelet gives the group the volume
        pod("app", "data", false, 1000L, 2000L, "echo 'written by app' > /data/hello.txt && sync");
        String id = provisionAsTheProvisionerDoes("data", "loopcsi-xfs", "1Gi", false, null);
        await("PVC data Bound", () -> "Bound".equals(kube.persistentVolumeClaims().inNamespace("default").withName("data").get().getStatus().getPhase()));
        timing("PVC to Bound (claim created, CreateVolume on the controller socket, PV written)", t0);
        awaitRunning("app");
        timing("pod to Running with a new volume (from the claim's creation)", t0);
        assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip());
        assertEquals("2000", exec("app", "stat", "-c", "%g", "/data/hello.txt").strip(), "the file belongs to the fsGroup");
        assertTrue(Files.exists(backingFile(id)), "the backing file is on the node: " + backingFile(id));

        // a pod with another uid and no fsGroup cannot write there
        Kubectl.apply(podYaml("intruder", "data", false, 3000L, null, "if touch /data/intruder 2>/dev/null; then echo WROTE; else echo DENIED; fi", "Never"));
        await("intruder done", () -> {
            String phase = kube.pods().inNamespace("default").withName("intruder").get().getStatus().getPhase();
            return "Succeeded".equals(phase) || "Failed".equals(phase);
        });
        assertEquals("DENIED", Kubectl.ok("logs", "intruder").strip(), "uid 3000 without the fsGroup wrote into the volume");
        deletePods("intruder");
    }

    /**
     * Issue #25: the node container killed (SIGKILL to every process of it, as the OOM killer or a
     * crash would) and restarted in place by kubelet, the volume in use untouched. Timed in parts
     * from /proc: the kill to the new container's first process (kubelet noticing the death,
     * PLEG's relist, and starting the container again: its first restart has no back-off), and
     * that process's start to the first Probe answered on the plugin socket (the JVM and the role).
     * LOOPCSI_E2E_RESTART_ROUNDS=N (BENCH_ONLY=node make bench) repeats it N times, each round
     * after the first in a new pod (a deleted pod, itself timed: a new pod UID is a new kubelet
     * back-off, so every kill is a first restart); every part goes to target/e2e/restart-timings.tsv.
     */
    @Test
    @Order(12)
    void step3a_nodeContainerKilledServesAgainAndTheVolumeInUseIsUntouched() throws InterruptedException, IOException {
        assumeTrue(VOLUMES.containsKey("data"));
        assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip());
        int rounds = Integer.parseInt(System.getenv().getOrDefault("LOOPCSI_E2E_RESTART_ROUNDS", "1"));
        for (int round = 1; round <= rounds; round++) {
            if (round > 1) {
                replaceNodePluginPod("round " + round);
            }
            Pod plugin = podWith("app.kubernetes.io/component", "node");
            ContainerStatus before = container(plugin, "loopcsi").orElseThrow();
            String oldId = before.getContainerID().replaceFirst("^.*://", "");
            List<Long> pids = processesOf(oldId).keySet().stream().toList();
            assertFalse(pids.isEmpty(), "the node container's processes");
            double killedAt = uptime();
            List<String> kill = new ArrayList<>(List.of("kill", "-KILL"));
            pids.forEach(pid -> kill.add(Long.toString(pid)));
            assertEquals(0, new ProcessBuilder(kill).inheritIO().start().waitFor(), "kill " + pids);
            await("the killed container's processes gone", () -> processesOf(oldId).isEmpty() ? true : null);
            exec("app", "sh", "-c", "echo 'written while the container was dead' > /data/killed.txt && sync");
            double probedAt = firstProbe();
            ContainerStatus after = await("the node container restarted in place", () -> container(podWith("app.kubernetes.io/component", "node"),
                    "loopcsi").filter(c -> c.getRestartCount() > before.getRestartCount() && c.getContainerID() != null).orElse(null));
            double startedAt = processesOf(after.getContainerID().replaceFirst("^.*://", "")).values().stream().min(Double::compare)
                    .orElseThrow(() -> new AssertionError("the restarted container's processes"));
            Map<String, Double> parts = new LinkedHashMap<>();
            parts.put("killed to the restart's first process (kubelet)", startedAt - killedAt);
            parts.put("first process to Probe (JVM, role)", probedAt - startedAt);
            parts.put("killed to Probe answering again", probedAt - killedAt);
            recordRestart("container kill", round, parts);
            // the role's own account of its start (Quarkus' "started in", the node's summary, the socket's publication)
            Kubectl.run("-n", NS, "logs", plugin.getMetadata().getName(), "-c", "loopcsi", "--timestamps").out().lines()
                    .filter(l -> l.contains("started in") || l.contains("published") || l.contains("serving pool"))
                    .forEach(l -> System.out.println("e2e timing: restarted node container's log: " + l));
            assertEquals(plugin.getMetadata().getUid(), podWith("app.kubernetes.io/component", "node").getMetadata().getUid(),
                    "kubelet restarted the container in its pod");
            assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip(), "the data after the container's restart");
            assertEquals("written while the container was dead", exec("app", "cat", "/data/killed.txt").strip());
        }
    }

    @Test
    @Order(13)
    void step3b_dataSurvivesPodRecreationAndANodePluginRestart() throws InterruptedException {
        assumeTrue(VOLUMES.containsKey("data"));
        deletePods("app");
        pod("app", "data", false, 1000L, 2000L, "true");
        awaitRunning("app");
        assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip(), "the data after the pod's re-creation");

        long t0 = System.nanoTime();
        Pod plugin = replaceNodePluginPod("last");
        // the application keeps its mount while no node plugin runs
        exec("app", "sh", "-c", "echo 'written while the plugin was away' > /data/during.txt && sync");
        assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip());
        Pod next = await("a new node plugin pod ready", () -> {
            Pod p = podWith("app.kubernetes.io/component", "node");
            return p != null && !p.getMetadata().getUid().equals(plugin.getMetadata().getUid())
                    && container(p, "loopcsi").map(ContainerStatus::getReady).orElse(false) ? p : null;
        });
        timing("node plugin pod killed to its successor ready", t0);
        assertEquals("written while the plugin was away", exec("app", "cat", "/data/during.txt").strip());
        // a new pod after the plugin's restart: kubelet unpublishes the old one and publishes through the new plugin
        deletePods("app");
        pod("app", "data", false, 1000L, 2000L, "true");
        awaitRunning("app");
        assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip());
        assertEquals("written while the plugin was away", exec("app", "cat", "/data/during.txt").strip());
        assertEquals(0, container(kube.pods().inNamespace(NS).withName(next.getMetadata().getName()).get(), "loopcsi").orElseThrow().getRestartCount());
    }

    @Test
    @Order(14)
    void step4_blockClaimHasItsSizeAndBytesSurviveAPodRestart() {
        assumeTrue(operatorRunning);
        claim("raw", "loopcsi-block", "64Mi", "Block");
        pod("blockapp", "raw", true, null, null, "printf 'raw bytes' | dd of=/dev/xvda conv=notrunc,fsync 2>/dev/null");
        provisionAsTheProvisionerDoes("raw", "loopcsi-block", "64Mi", true, null);
        awaitRunning("blockapp");
        assertEquals(Long.toString(64L << 20), exec("blockapp", "blockdev", "--getsize64", "/dev/xvda").strip());
        await("the bytes written", () -> "raw bytes".equals(exec("blockapp", "sh", "-c", "dd if=/dev/xvda bs=9 count=1 2>/dev/null")));
        deletePods("blockapp");
        pod("blockapp", "raw", true, null, null, "true");
        awaitRunning("blockapp");
        assertEquals("raw bytes", exec("blockapp", "sh", "-c", "dd if=/dev/xvda bs=9 count=1 2>/dev/null"), "the bytes after a pod restart");
    }

    @Test
    @Order(15)
    void step5_onlineExpansionGrowsTheFilesystemInTheRunningPod() {
        assumeTrue(VOLUMES.containsKey("data"));
        long before = Long.parseLong(exec("app", "sh", "-c", "df -B1 /data | awk 'NR==2 {print $2}'").strip());
        assertTrue(before < GI, "1Gi before: " + before);
        long t0 = System.nanoTime();
        // the user asks for more
        Kubectl.ok("patch", "pvc", "data", "--type=merge", "-p", "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"2Gi\"}}}}");
        // csi-resizer's part: ControllerExpandVolume, then the PV's new capacity
        ControllerExpandVolumeResponse grown;
        try (CsiClient c = controllerCsi()) {
            grown = c.controller.controllerExpandVolume(SidecarRequests.expandVolume(VOLUMES.get("data"), 2 * GI, false, "xfs", List.of(),
                    "ReadWriteOnce", true));
        }
        assertEquals(2 * GI, grown.getCapacityBytes(), grown::toString);
        assertTrue(grown.getNodeExpansionRequired(), grown::toString);
        String pv = pvName("data");
        Kubectl.ok("patch", "pv", pv, "--type=merge", "-p", "{\"spec\":{\"capacity\":{\"storage\":\"2Gi\"}}}");
        // kubelet sees the PV larger than the claim's status at its next sync of the pod (every
        // minute); a change to the pod makes that sync now
        Kubectl.ok("annotate", "pod", "app", "e2e.loopcsi.io/resized=2Gi", "--overwrite");
        await("kubelet expanded the volume (the claim's status says 2Gi)", () -> "2Gi".equals(
                kube.persistentVolumeClaims().inNamespace("default").withName("data").get().getStatus().getCapacity().get("storage").toString()));
        timing("online expansion, claim patched to kubelet's NodeExpandVolume done", t0);
        long after = Long.parseLong(exec("app", "sh", "-c", "df -B1 /data | awk 'NR==2 {print $2}'").strip());
        assertTrue(after > 1900L * (1 << 20), "the filesystem in the running pod grew: " + before + " -> " + after);
        assertEquals("written by app", exec("app", "cat", "/data/hello.txt").strip());
    }

    @Test
    @Order(16)
    void step6_snapshotRestoredIntoANewClaimHoldsTheData() {
        assumeTrue(VOLUMES.containsKey("data"));
        // csi-snapshotter's part: CreateSnapshot of the volume in use, for a VolumeSnapshot default/data-snap
        csi.v1.Snapshot snap;
        try (CsiClient c = controllerCsi()) {
            String uid = java.util.UUID.randomUUID().toString();
            snap = c.controller.createSnapshot(SidecarRequests.createSnapshot(VOLUMES.get("data"), uid, "data-snap", "default",
                    "snapcontent-" + uid, Map.of())).getSnapshot();
        }
        snapshotId = snap.getSnapshotId();
        assertTrue(snap.getReadyToUse() && snap.getSizeBytes() > 0 && snap.getCreationTime().getSeconds() > 0, snap::toString);
        long t0 = System.nanoTime();
        claim("restored", "loopcsi-xfs", "2Gi", "Filesystem");
        pod("reader", "restored", false, 1000L, 2000L, "true");
        provisionAsTheProvisionerDoes("restored", "loopcsi-xfs", "2Gi", false, snapshotId);
        awaitRunning("reader");
        timing("restored claim's pod to Running (from the claim's creation)", t0);
        assertEquals("written by app", exec("reader", "cat", "/data/hello.txt").strip(), "the restored volume holds the snapshot's data");
    }

    /**
     * The node container at its default memory limit (operator/desired/ContainerResources: 128Mi for
     * the native executable the pool runs by default; the launcher gives it -Xmx96m from it) keeps 1000 volumes and serves a churn of 200 more created and
     * deleted, as the controller asks (LoopVolume objects, as controller/ApiVolumeProvider writes them),
     * without an OOM kill or a restart. LOOPCSI_E2E_KEPT_VOLUMES changes the 1000.
     */
    @Test
    @Order(17)
    void step6b_theNodeContainerAtItsDefaultLimitKeepsAThousandVolumesAndServesChurnWithoutARestart() {
        assumeTrue(operatorRunning, "the operator does not run");
        int kept = Integer.parseInt(System.getenv().getOrDefault("LOOPCSI_E2E_KEPT_VOLUMES", "1000"));
        Pod plugin = podWith("app.kubernetes.io/component", "node");
        var spec = plugin.getSpec().getContainers().stream().filter(c -> c.getName().equals("loopcsi")).findFirst().orElseThrow();
        assertEquals("128Mi", spec.getResources().getLimits().get("memory").toString(), "the native node container's default limit");
        ContainerStatus before = container(plugin, "loopcsi").orElseThrow();
        long t0 = System.nanoTime();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < kept; i++) {
            names.add(createLoopVolume("limit-kept-" + i));
        }
        for (String name : names) {
            io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await("LoopVolume " + name + " created by the node", Duration.ofSeconds(600), () -> {
                LoopVolume v = kube.resources(LoopVolume.class).withName(name).get();
                return v != null && v.created();
            });
        }
        timing(kept + " volumes made by the node plugin at its default limit", t0);
        long t1 = System.nanoTime();
        for (int i = 0; i < 200; i++) {
            String name = createLoopVolume("limit-churn-" + i);
            await("churn volume created", () -> {
                LoopVolume v = kube.resources(LoopVolume.class).withName(name).get();
                return v != null && v.created();
            });
            kube.resources(LoopVolume.class).withName(name).delete();
            await("churn volume deleted", () -> kube.resources(LoopVolume.class).withName(name).get() == null);
        }
        timing("200 create+delete pairs with " + kept + " volumes kept", t1);
        ContainerStatus after = container(podWith("app.kubernetes.io/component", "node"), "loopcsi").orElseThrow();
        assertEquals(before.getRestartCount(), after.getRestartCount(), "no restart of the node container: " + after.getLastState());
        assertTrue(after.getLastState() == null || after.getLastState().getTerminated() == null
                || !"OOMKilled".equals(after.getLastState().getTerminated().getReason()) || before.getRestartCount() > 0,
                "never OOM-killed: " + after.getLastState());
        assertEquals(before.getContainerID(), after.getContainerID(), "the same container throughout");
        for (String name : names) {
            kube.resources(LoopVolume.class).withName(name).delete();
        }
        for (String name : names) {
            io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await("LoopVolume " + name + " deleted by the node", Duration.ofSeconds(600),
                    () -> kube.resources(LoopVolume.class).withName(name).get() == null);
        }
        assertEquals(before.getRestartCount(), container(podWith("app.kubernetes.io/component", "node"), "loopcsi").orElseThrow()
                .getRestartCount(), "no restart while they were deleted");
    }

    /** A 1 MiB block volume on the node, asked for as the controller asks (controller/ApiVolumeProvider#createVolume). */
    static String createLoopVolume(String requestName) {
        String name = HandoffNames.object(POOL, io.loopcsi.engine.Ids.volumeIdFor(requestName));
        io.loopcsi.handoff.LoopVolumeSpec s = new io.loopcsi.handoff.LoopVolumeSpec();
        s.setPool(POOL);
        s.setDriver(DRIVER);
        s.setNode(NODE);
        s.setName(requestName);
        s.setRequiredBytes(1L << 20);
        s.setLimitBytes(0L);
        s.setMode(io.loopcsi.engine.VolumeMode.BLOCK);
        s.setFsType("");
        s.setAttempt(0L);
        LoopVolume lv = new LoopVolume(name, s);
        lv.getMetadata().setLabels(HandoffNames.labels(POOL, NODE));
        kube.resource(lv).create();
        return name;
    }

    @Test
    @Order(18)
    void step7_deletedClaimsLeaveNoBackingFilesAndThePoolGoesLast() throws InterruptedException {
        assumeTrue(!VOLUMES.isEmpty());
        printMemory(); // while every volume is in use
        deletePods("app", "blockapp", "reader");
        Kubectl.ok("delete", "storagepool", POOL, "--wait=false");
        await("the pool's deletion is held while its PVs exist", () -> Conditions.find(
                kube.resources(StoragePool.class).withName(POOL).get().getStatus().getConditions(), Conditions.READY)
                .map(c -> "DeletionBlocked".equals(c.getReason())).orElse(false));
        assertTrue(Files.exists(backingFile(VOLUMES.get("data"))));
        // the claims go; csi-provisioner's part for reclaimPolicy Delete: DeleteVolume (retried while
        // kubelet's unstage is still letting go), then the PV object
        Kubectl.ok("delete", "pvc", "data", "raw", "restored", "--wait=false");
        for (Map.Entry<String, String> v : VOLUMES.entrySet()) {
            deleteVolumeAsTheProvisionerDoes(v.getValue());
            assertFalse(Files.exists(backingFile(v.getValue())), "backing file of " + v.getKey() + " gone");
        }
        try (CsiClient c = controllerCsi()) {
            c.controller.deleteSnapshot(SidecarRequests.deleteSnapshot(snapshotId));
        }
        // step 8 reads these pods' logs: they go with the pool
        captureLoopcsiLogs();
        for (String claim : VOLUMES.keySet()) {
            Kubectl.ok("delete", "pv", pvName(claim), "--wait=true");
        }
        await("no claims left", () -> kube.persistentVolumeClaims().inNamespace("default").list().getItems().isEmpty());
        long t0 = System.nanoTime();
        await("the pool is gone once its PVs are", () -> kube.resources(StoragePool.class).withName(POOL).get() == null);
        timing("pool deleted after its last PV", t0);
        await("the pool's pods are gone", () -> kube.pods().inNamespace(NS).withLabel("app.kubernetes.io/instance", POOL).list().getItems().isEmpty());
        try (Stream<Path> left = Files.list(Path.of(BACKING_DIR, "volumes"))) {
            assertEquals(List.of(), left.toList(), "no volume files left in the pool's backing directory");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        assertTrue(kube.resources(LoopVolume.class).list().getItems().isEmpty(), "no LoopVolume left");
    }

    @Test
    @Order(19)
    void step8_noLoopcsiContainerLogsAnErrorOrStackTrace() {
        assumeTrue(operatorRunning);
        Pod operator = onePod("app.kubernetes.io/component", "operator");
        captureLog(operator, "operator");
        assertTrue(CONTAINER_LOGS.keySet().stream().anyMatch(k -> k.contains("-node-")), "the node plugin's log: " + CONTAINER_LOGS.keySet());
        assertTrue(CONTAINER_LOGS.keySet().stream().anyMatch(k -> k.contains("-controller-")), "the controller's log: " + CONTAINER_LOGS.keySet());
        CONTAINER_LOGS.forEach((container, log) -> {
            assertFalse(log.isBlank(), container + " logged nothing");
            try {
                assertCleanLog(log);
            } catch (AssertionError e) {
                throw new AssertionError(container + ": " + e.getMessage());
            }
        });
    }

    // --- what the stand-in sidecars would do, and the application pods

    static String controllerPod() {
        return await("a running controller pod", () -> {
            Pod p = podWith("app.kubernetes.io/component", "controller");
            return p != null && container(p, "loopcsi").map(ContainerStatus::getReady).orElse(false) ? p.getMetadata().getName() : null;
        });
    }

    /**
     * The pool controller's CSI socket, on this machine: in the pod's emptyDir (Sidecars.SOCKET_VOLUME)
     * that its sidecars share. Its path is longer than a unix socket address may be (108 bytes), so
     * it is reached through a short symbolic link to that directory.
     */
    static CsiClient controllerCsi() {
        Pod p = kube.pods().inNamespace(NS).withName(controllerPod()).get();
        Path dir = Path.of("/var/lib/kubelet/pods", p.getMetadata().getUid(), "volumes/kubernetes.io~empty-dir/socket-dir");
        try {
            if (socketLinks == null) {
                socketLinks = Files.createTempDirectory("e2e-sock");
            }
            Path link = socketLinks.resolve(p.getMetadata().getUid().substring(0, 8));
            if (!Files.isSymbolicLink(link)) {
                Files.createSymbolicLink(link, dir);
            }
            return new CsiClient(link.resolve("csi.sock"));
        } catch (IOException e) {
            throw new AssertionError("cannot link to " + dir, e);
        }
    }

    static Path socketLinks;

    /**
     * csi-provisioner v2.1.2's capacity tracking (--enable-capacity, external-provisioner
     * pkg/capacity): for each WaitForFirstConsumer class of the driver and each topology segment
     * (the driver's CSINode topology keys with the Node's values of those labels), GetCapacity with
     * the class' parameters as they are and one mount capability of access mode UNKNOWN; for a
     * non-zero answer a storage.k8s.io/v1alpha1 CSIStorageCapacity named csisc-..., in the
     * provisioner's namespace, owned (--capacity-ownerref-level=2) by the controller Deployment,
     * without maximumVolumeSize (v2.2 added it). The CSIDriver says storageCapacity: true, so the
     * scheduler places no pod with a new claim without them.
     */
    static void publishCapacityAsTheProvisionerDoes() {
        var csiNode = kube.storage().v1().csiNodes().withName(NODE).get();
        List<String> keys = csiNode.getSpec().getDrivers().stream().filter(d -> d.getName().equals(DRIVER)).findFirst().orElseThrow().getTopologyKeys();
        Map<String, String> labels = kube.nodes().withName(NODE).get().getMetadata().getLabels();
        Map<String, String> segment = new java.util.TreeMap<>();
        keys.forEach(k -> segment.put(k, labels.get(k)));
        Deployment owner = kube.apps().deployments().inNamespace(NS).withLabel("app.kubernetes.io/component", "controller").list().getItems().get(0);
        List<StorageClass> classes = kube.storage().v1().storageClasses().list().getItems().stream()
                .filter(c -> DRIVER.equals(c.getProvisioner()) && "WaitForFirstConsumer".equals(c.getVolumeBindingMode())).toList();
        assertEquals(2, classes.size(), "the example pool's classes");
        try (CsiClient c = controllerCsi()) {
            for (StorageClass sc : classes) {
                var cls = new SidecarRequests.StorageClass(sc.getParameters(), List.of());
                long bytes = c.controller.getCapacity(SidecarRequests.getCapacity(SidecarRequests.Provisioner.V2_1_2, cls, segment))
                        .getAvailableCapacity();
                assertTrue(bytes > 40 * GI, "GetCapacity of an empty 50Gi pool for " + sc.getMetadata().getName() + ": " + bytes);
                Kubectl.create("""
                        apiVersion: storage.k8s.io/v1alpha1
                        kind: CSIStorageCapacity
                        metadata:
                          generateName: csisc-
                          namespace: %s
                          ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %s, uid: %s, controller: true}]
                        storageClassName: %s
                        nodeTopology: {matchLabels: %s}
                        capacity: "%d"
                        """.formatted(NS, owner.getMetadata().getName(), owner.getMetadata().getUid(), sc.getMetadata().getName(),
                        segment.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining(", ", "{", "}")), bytes));
            }
        }
    }

    static void claim(String name, String storageClass, String size, String mode) {
        Kubectl.apply("""
                apiVersion: v1
                kind: PersistentVolumeClaim
                metadata: {name: %s, namespace: default}
                spec:
                  storageClassName: %s
                  volumeMode: %s
                  accessModes: [ReadWriteOnce]
                  resources: {requests: {storage: %s}}
                """.formatted(name, storageClass, mode, size));
    }

    /** An application pod: runs SCRIPT, then sleeps until deleted; the claim at /data or as the device /dev/xvda. */
    static void pod(String name, String claim, boolean block, Long uid, Long fsGroup, String script) {
        Kubectl.apply(podYaml(name, claim, block, uid, fsGroup, script + " && { trap 'exit 0' TERM; sleep 100000 & wait; }", "Always"));
    }

    static String podYaml(String name, String claim, boolean block, Long uid, Long fsGroup, String script, String restart) {
        String security = uid == null ? "{}" : "{runAsUser: %d, runAsGroup: %d%s}".formatted(uid, uid, fsGroup == null ? "" : ", fsGroup: " + fsGroup);
        String attach = block ? "volumeDevices: [{name: vol, devicePath: /dev/xvda}]" : "volumeMounts: [{name: vol, mountPath: /data}]";
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: default}
                spec:
                  restartPolicy: %s
                  terminationGracePeriodSeconds: 2
                  securityContext: %s
                  containers:
                  - name: app
                    image: %s
                    imagePullPolicy: Never
                    command: [sh, -c, %s]
                    %s
                  volumes: [{name: vol, persistentVolumeClaim: {claimName: %s}}]
                """.formatted(name, restart, security, loopcsi.name(), quoted(script), attach, claim);
    }

    static String quoted(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    /**
     * csi-provisioner v2.1.2 for a WaitForFirstConsumer claim: once the scheduler selected a node
     * for the claim's pod, CreateVolume as SidecarRequests builds it (pvc-UID, the class' parameters
     * without csi.storage.k8s.io/ keys plus --extra-create-metadata's, --strict-topology on the
     * selected node, --default-fstype of the Deployment), then the PV bound to the claim with the
     * node affinity of the volume's accessible topology. Returns the volume ID.
     */
    static String provisionAsTheProvisionerDoes(String claim, String storageClass, String size, boolean block, String fromSnapshot) {
        var pvc = await("the scheduler selected a node for claim " + claim, () -> {
            var c = kube.persistentVolumeClaims().inNamespace("default").withName(claim).get();
            return c.getMetadata().getAnnotations() != null && c.getMetadata().getAnnotations().containsKey("volume.kubernetes.io/selected-node") ? c : null;
        });
        String node = pvc.getMetadata().getAnnotations().get("volume.kubernetes.io/selected-node");
        assertEquals(NODE, node);
        StorageClass sc = kube.storage().v1().storageClasses().withName(storageClass).get();
        String fs = sc.getParameters().get("csi.storage.k8s.io/fstype");
        long bytes = new io.fabric8.kubernetes.api.model.Quantity(size).getNumericalAmount().longValue();
        var request = new SidecarRequests.Claim(pvc.getMetadata().getUid(), claim, "default", bytes, pvc.getSpec().getAccessModes(), block);
        String defaultFs = kube.apps().deployments().inNamespace(NS).withLabel("app.kubernetes.io/component", "controller").list().getItems().get(0)
                .getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> c.getName().equals("csi-provisioner")).findFirst()
                .orElseThrow().getArgs().stream().filter(a -> a.startsWith("--default-fstype=")).map(a -> a.substring(17)).findFirst().orElse("");
        csi.v1.Volume volume;
        try (CsiClient c = controllerCsi()) {
            volume = c.controller.createVolume(SidecarRequests.createVolume(SidecarRequests.Provisioner.V2_1_2,
                    new SidecarRequests.StorageClass(sc.getParameters(), List.of()), request, defaultFs, node, true,
                    fromSnapshot == null ? null : SidecarRequests.fromSnapshot(fromSnapshot), null)).getVolume();
        }
        String id = volume.getVolumeId();
        String pv = request.pvName();
        assertEquals(NODE, volume.getAccessibleTopology(0).getSegmentsMap().get(TOPOLOGY_KEY), volume.toString());
        if (fromSnapshot != null) {
            assertEquals(fromSnapshot, volume.getContentSource().getSnapshot().getSnapshotId(), "csi-provisioner deletes a restore without it");
        }
        VOLUMES.put(claim, id);
        Kubectl.apply("""
                apiVersion: v1
                kind: PersistentVolume
                metadata:
                  name: %s
                  annotations: {pv.kubernetes.io/provisioned-by: %s}
                spec:
                  capacity: {storage: "%s"}
                  accessModes: [ReadWriteOnce]
                  persistentVolumeReclaimPolicy: Delete
                  storageClassName: %s
                  volumeMode: %s
                  claimRef: {namespace: default, name: %s, uid: %s}
                  csi: {driver: %s, volumeHandle: %s%s}
                  nodeAffinity:
                    required:
                      nodeSelectorTerms: [{matchExpressions: [{key: %s, operator: In, values: [%s]}]}]
                """.formatted(pv, DRIVER, volume.getCapacityBytes(), storageClass, block ? "Block" : "Filesystem", claim,
                pvc.getMetadata().getUid(), DRIVER, id, fs == null ? "" : ", fsType: " + fs, TOPOLOGY_KEY, NODE));
        return id;
    }

    static String pvName(String claim) {
        return kube.persistentVolumeClaims().inNamespace("default").withName(claim).get() != null
                ? kube.persistentVolumeClaims().inNamespace("default").withName(claim).get().getSpec().getVolumeName()
                : kube.persistentVolumes().list().getItems().stream().filter(p -> claim.equals(p.getSpec().getClaimRef().getName()))
                        .map(p -> p.getMetadata().getName()).findFirst().orElseThrow();
    }

    /** DeleteVolume, retried while the node still refuses it as in use (FAILED_PRECONDITION), as csi-provisioner retries. */
    static void deleteVolumeAsTheProvisionerDoes(String id) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        try (CsiClient c = controllerCsi()) {
            while (true) {
                try {
                    c.controller.deleteVolume(SidecarRequests.deleteVolume(id));
                    return;
                } catch (io.grpc.StatusRuntimeException e) {
                    if (e.getStatus().getCode() != io.grpc.Status.Code.FAILED_PRECONDITION || System.nanoTime() > deadline) {
                        throw new AssertionError("DeleteVolume " + id + ": " + e.getStatus(), e);
                    }
                }
                Thread.sleep(1000);
            }
        }
    }

    static void awaitRunning(String pod) {
        await("pod " + pod + " Running and ready", () -> {
            Pod p = kube.pods().inNamespace("default").withName(pod).get();
            return p != null && container(p, "app").map(ContainerStatus::getReady).orElse(false);
        });
    }

    static String exec(String pod, String... command) {
        List<String> cmd = new ArrayList<>(List.of("exec", pod, "-c", "app", "--"));
        cmd.addAll(List.of(command));
        return Kubectl.ok(cmd.toArray(String[]::new));
    }

    static void deletePods(String... pods) {
        List<String> cmd = new ArrayList<>(List.of("delete", "pod", "--ignore-not-found", "--wait=true"));
        cmd.addAll(List.of(pods));
        Kubectl.ok(cmd.toArray(String[]::new));
    }

    /** The node is this machine: the pool's backing files are here. */
    static Path backingFile(String volumeId) {
        return Path.of(BACKING_DIR, "volumes", volumeId + ".img");
    }

    static void captureLoopcsiLogs() {
        for (Pod p : kube.pods().inNamespace(NS).withLabel("app.kubernetes.io/instance", POOL).list().getItems()) {
            captureLog(p, "loopcsi");
        }
    }

    /** The container's log, and that of its previous run when kubelet restarted it (`kubectl logs --previous`). */
    static void captureLog(Pod p, String container) {
        CONTAINER_LOGS.put(p.getMetadata().getName() + "/" + container, logs(p, container, false));
        if (container(p, container).map(ContainerStatus::getRestartCount).orElse(0) > 0) {
            CONTAINER_LOGS.put(p.getMetadata().getName() + "/" + container + " (previous run)", logs(p, container, true));
        }
    }

    /**
     * For the note, not a check: seconds from the first process of the node plugin's new loopcsi
     * container (its start time in /proc: the node is this machine) to the first Probe answered on
     * the CSI socket kubelet uses, polled every 10 ms from here.
     */
    /**
     * Deletes the node plugin pod (grace 1 s) and waits for its successor's first Probe. Where the
     * replacement spends its time (issue #25), in seconds from the delete: the API's timestamps
     * (whole seconds) for the new pod's creation, scheduling and its doctor init container, /proc
     * (10 ms) for the loopcsi process, the socket for the first Probe. Returns the deleted pod.
     */
    static Pod replaceNodePluginPod(String round) throws InterruptedException {
        Pod plugin = podWith("app.kubernetes.io/component", "node");
        double deletedAt = uptime();
        Kubectl.ok("-n", NS, "delete", "pod", plugin.getMetadata().getName(), "--grace-period=1", "--wait=true");
        double goneAt = uptime();
        double probedAt = firstProbe();
        Pod successor = await("the new node plugin's container", () -> {
            Pod n = podWith("app.kubernetes.io/component", "node");
            return n != null && !n.getMetadata().getUid().equals(plugin.getMetadata().getUid())
                    && container(n, "loopcsi").map(ContainerStatus::getContainerID).isPresent() ? n : null;
        });
        double processAt = processesOf(container(successor, "loopcsi").orElseThrow().getContainerID().replaceFirst("^.*://", ""))
                .values().stream().min(Double::compare).orElseThrow(() -> new AssertionError("the new container's processes"));
        double wallOfUptime = System.currentTimeMillis() / 1000.0 - uptime();
        java.util.function.ToDoubleFunction<String> at = ts -> ts == null ? Double.NaN
                : java.time.Instant.parse(ts).toEpochMilli() / 1000.0 - wallOfUptime - deletedAt;
        Map<String, Double> parts = new LinkedHashMap<>();
        parts.put("old pod gone (kubectl delete --wait)", goneAt - deletedAt);
        parts.put("new pod created (DaemonSet controller)", at.applyAsDouble(successor.getMetadata().getCreationTimestamp()));
        successor.getStatus().getConditions().stream().filter(c -> "PodScheduled".equals(c.getType())).findFirst()
                .ifPresent(c -> parts.put("new pod scheduled", at.applyAsDouble(c.getLastTransitionTime())));
        successor.getStatus().getInitContainerStatuses().stream().filter(c -> c.getState().getTerminated() != null).findFirst().ifPresent(c -> {
            parts.put("doctor init container started", at.applyAsDouble(c.getState().getTerminated().getStartedAt()));
            parts.put("doctor init container finished", at.applyAsDouble(c.getState().getTerminated().getFinishedAt()));
        });
        parts.put("loopcsi container's first process", processAt - deletedAt);
        parts.put("first Probe answered", probedAt - deletedAt);
        parts.put("loopcsi's first process to Probe (JVM, role)", probedAt - processAt);
        recordRestart("pod delete", round.equals("last") ? 0 : Integer.parseInt(round.replaceAll("\\D", "")), parts);
        return plugin;
    }

    /** Prints a restart's parts and appends them to target/e2e/restart-timings.tsv (kind, round, part, seconds). */
    static void recordRestart(String kind, int round, Map<String, Double> parts) {
        StringBuilder tsv = new StringBuilder();
        parts.forEach((what, secs) -> {
            System.out.printf("e2e timing: node %s, round %d: %-48s %6.2f s%n", kind, round, what, secs);
            tsv.append(kind).append('\t').append(round).append('\t').append(what).append('\t').append(String.format("%.3f", secs)).append('\n');
        });
        try {
            Path out = Path.of("target/e2e/restart-timings.tsv");
            Files.createDirectories(out.getParent());
            Files.writeString(out, tsv, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** uptime (s) when the plugin socket first answers Probe, polled every 10 ms. */
    static double firstProbe() throws InterruptedException {
        Path socket = Path.of("/var/lib/kubelet/plugins/" + DRIVER + "/csi.sock");
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(socket)) {
                try (CsiClient c = new CsiClient(socket)) {
                    c.identity.withDeadlineAfter(1, TimeUnit.SECONDS).probe(ProbeRequest.getDefaultInstance());
                    return uptime();
                } catch (RuntimeException notYet) {
                    // not listening yet
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no node plugin answered Probe on " + socket + " within " + WAIT);
    }

    /**
     * The processes of a container on this node (the node is this machine: a container's processes
     * are those whose cgroup names its ID), each with its start as uptime seconds (/proc/PID/stat
     * field 22, clock ticks of USER_HZ 100).
     */
    static Map<Long, Double> processesOf(String containerId) {
        Map<Long, Double> found = new LinkedHashMap<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(x -> x.getFileName().toString().matches("\\d+")).toList()) {
                try {
                    if (Files.readString(proc.resolve("cgroup")).contains(containerId)) {
                        String stat = Files.readString(proc.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        found.put(Long.parseLong(proc.getFileName().toString()), Long.parseLong(f[19]) / 100.0);
                    }
                } catch (IOException | RuntimeException gone) {
                    // exited meanwhile
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return found;
    }

    static double uptime() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    // --- helpers

    /**
     * VmRSS of the processes of every running container in the namespace (information, not a
     * check): the node is this machine, so a container's processes are those whose cgroup names
     * its container ID.
     */
    static void printMemory() {
        for (Pod pod : kube.pods().inNamespace(NS).list().getItems()) {
            for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
                if (c.getState().getRunning() == null || c.getContainerID() == null) {
                    continue;
                }
                String id = c.getContainerID().replaceFirst("^.*://", "");
                long kib = 0;
                try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
                    for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                        try {
                            if (Files.readString(proc.resolve("cgroup")).contains(id)) {
                                kib += Files.readAllLines(proc.resolve("status")).stream().filter(l -> l.startsWith("VmRSS:"))
                                        .mapToLong(l -> Long.parseLong(l.replaceAll("\\D", ""))).sum();
                            }
                        } catch (IOException | RuntimeException gone) {
                            // the process exited meanwhile
                        }
                    }
                } catch (IOException e) {
                    return;
                }
                System.out.printf("e2e memory: %-45s %-22s RSS %4d MiB%n", pod.getMetadata().getName(), c.getName(), kib >> 10);
            }
        }
    }

    static Pod podWith(String label, String value) {
        return kube.pods().inNamespace(NS).withLabel("app.kubernetes.io/instance", POOL).withLabel(label, value).list().getItems()
                .stream().findFirst().orElse(null);
    }

    static Pod onePod(String label, String value) {
        List<Pod> pods = kube.pods().inNamespace(NS).withLabel(label, value).list().getItems();
        assertEquals(1, pods.size(), "one pod " + label + "=" + value);
        return pods.get(0);
    }

    static Optional<ContainerStatus> container(Pod pod, String name) {
        if (pod == null || pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return Optional.empty();
        }
        return pod.getStatus().getContainerStatuses().stream().filter(c -> c.getName().equals(name)).findFirst();
    }

    /** A container whose image is not on the node: fail now, naming it (there is no registry to pull from). */
    static void failIfImageMissing(Pod pod) {
        for (ContainerStatus c : pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null ? List.<ContainerStatus>of()
                : pod.getStatus().getContainerStatuses()) {
            var waiting = c.getState() == null ? null : c.getState().getWaiting();
            if (waiting != null && Set.of("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName").contains(waiting.getReason())) {
                throw new AssertionError(pod.getMetadata().getName() + "/" + c.getName() + ": image " + c.getImage() + " is not on the node ("
                        + waiting.getReason() + "); make standin-images makes the sidecar names it finds in src/main/java/io/loopcsi/operator");
            }
        }
    }

    /** A container that exited and was restarted by kubelet: fail now, with what it said before it died. */
    static void failIfRestarted(Pod pod, String container) {
        container(pod, container).filter(c -> c.getRestartCount() > 0).ifPresent(c -> {
            var last = c.getLastState() == null ? null : c.getLastState().getTerminated();
            throw new AssertionError(pod.getMetadata().getName() + "/" + container + " exited"
                    + (last == null ? "" : " with " + last.getExitCode() + " (" + last.getReason() + ")") + " and was restarted; its log:\n"
                    + logs(pod, container, true));
        });
    }

    static String logs(Pod pod, String container, boolean previous) {
        List<String> args = new ArrayList<>(List.of("-n", NS, "logs", pod.getMetadata().getName(), "-c", container));
        if (previous) {
            args.add("--previous");
        }
        return Kubectl.run(args.toArray(String[]::new)).out();
    }

    /** What an admin reading `kubectl logs` must not see: an error or a stack trace. */
    static void assertCleanLog(String log) {
        List<String> bad = log.lines().filter(l -> l.contains(" ERROR ") || l.contains("Exception") || l.matches("^\\s+at .*")).toList();
        assertTrue(bad.isEmpty(), "errors in the log:\n" + String.join("\n", bad) + "\n--- whole log:\n" + log);
    }

    static void timing(String what, long t0) {
        TIMINGS.put(what, Duration.ofNanos(System.nanoTime() - t0));
    }

    static <T> T await(String what, Supplier<T> check) {
        return io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await(what, WAIT, check);
    }
}
