package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.VolumeCapability;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.cli.evacuate.MoveRecord;
import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.Launcher;

/**
 * Issue 35, part 3: {@code loopcsi evacuate}, run by the packaged launcher as an admin runs it (the
 * kube-testenv admin's $KUBECONFIG), on a REAL kube-apiserver 1.20 with kube-controller-manager (the
 * PV controller binds the claims, pvc-protection holds a claim in use). The operator (in this JVM)
 * rolls out pool "ev"; its two node processes (node-a, node-b) run from the packaged launcher with the
 * DaemonSet's pod spec and their ServiceAccount's token, each serving transfers. No controller
 * process: the test makes its volumes through the controller's own code (ApiVolumeProvider) and
 * writes claims and PVs as csi-provisioner and a user would; the evacuation is the controller for the
 * copies it makes. node-a holds five claimed volumes (two xfs with a file each, three block with
 * bytes written, one of them thick) and a sixth claim in use by a pod.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EvacuateKubeIT {

    static final String NS = "loopcsi-system";
    /** The claims' and the workload's namespace: the kube tests share one API server, and others make claims in default. */
    static final String APPS = "evacuate-apps";
    static final String POOL = "ev";
    static final String DRIVER = "ev.loopcsi.io";
    static final long MI = 1L << 20;

    static KubernetesClient admin;
    static KubernetesClient asOperator;
    static Operator operator;
    static ApiVolumeProvider controllerCode;
    static Path root;
    static final Map<String, Launcher> nodes = new HashMap<>();
    static final Map<String, PodProcess> nodePods = new HashMap<>();
    static final Map<String, Integer> transferPorts = new HashMap<>();
    /** claim name -> what it was before the move. */
    static final Map<String, Before> claims = new LinkedHashMap<>();

    record Before(String volumeId, String pv, String uid, String digest, long imageSize, boolean block, boolean thick) {
    }

    @BeforeAll
    static void rollOutThePoolWithTwoNodesAndFillNodeA() throws Exception {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED EvacuateKubeIT: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); `make test-kube`");
        }
        assumeTrue(configured, "no test cluster");
        root = Files.createTempDirectory("ev");
        Kubectl.ok("apply", "-k", "kubernetes/");
        admin = new KubernetesClientBuilder().build();
        for (String crd : List.of("storagepools", "loopvolumes", "loopsnapshots", "loopgroupsnapshots", "looppoolnodes", "looptransfers")) {
            String name = crd + ".loopcsi.io";
            await("CRD " + name, () -> admin.apiextensions().v1().customResourceDefinitions().withName(name).get().getStatus().getConditions()
                    .stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        }
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername("system:serviceaccount:" + NS + ":loopcsi-operator");
        asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
        operator.register(new StoragePoolReconciler());
        operator.start();
        for (String n : List.of("node-a", "node-b")) {
            if (admin.nodes().withName(n).get() == null) {
                admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(n).addToLabels("kubernetes.io/hostname", n).endMetadata()
                        .build()).create();
            }
        }
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: ev}
                spec:
                  capacityPerNode: 8Gi
                  fsTypes: [xfs]
                  storageClasses:
                    - {name: ev-xfs, volumeMode: Filesystem, fsType: xfs}
                    - {name: ev-block, volumeMode: Block}
                """);
        DaemonSet ds = await("node DaemonSet", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-ev-node").get());
        for (String n : List.of("node-a", "node-b")) {
            Path hostRoot = Files.createDirectories(root.resolve(n));
            Files.createDirectories(hostRoot.resolve("var/lib/kubelet/plugins_registry"));
            transferPorts.put(n, Launcher.freePort());
            // the transfer server as the operator configures it (as PoolServesVolumesKubeIT): the DaemonSet's env,
            // the pod's IP and transfer port mapped to this machine, the token written where its projected volume is
            PodProcess pod = PodProcess.of(ds.getSpec().getTemplate().getSpec(), "loopcsi", Map.of("spec.nodeName", n, "status.podIP", "127.0.0.1"),
                    hostRoot, root.resolve(n + "-pod"), Map.of(9090, Launcher.freePort(), 9810, transferPorts.get(n)));
            nodePods.put(n, pod);
            Map<String, String> env = new HashMap<>(pod.env());
            env.put("KUBECONFIG", serviceAccountKubeconfig("loopcsi-ev-node", root.resolve(n + ".kubeconfig")).toString());
            Path tokenFile = Path.of(pod.env().get("LOOPCSI_NODE_TRANSFER_TOKEN_FILE"));
            Files.createDirectories(tokenFile.getParent());
            Files.copy(transferToken(ds, n), tokenFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            nodes.put(n, Launcher.start(root, n, pod.args(), env).awaitCsi(socketOf(n)));
            await(n + " publishes its transfer endpoint", () -> {
                LoopPoolNode p = admin.resources(LoopPoolNode.class).withName(POOL + "." + n).get();
                return p != null && p.getStatus() != null && p.getStatus().getTransferAddress() != null ? p : null;
            });
        }
        controllerCode = new ApiVolumeProvider(admin, POOL, DRIVER, Duration.ofSeconds(100), Duration.ofSeconds(60), Clock.systemUTC()).start();
        admin.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(APPS).endMetadata()
                .build()).create();
        await("the default ServiceAccount of " + APPS, () -> admin.serviceAccounts().inNamespace(APPS).withName("default").get());
        claimed("data-1", false, false);
        claimed("data-2", false, false);
        claimed("data-3", true, true);
        claimed("data-4", true, false);
        claimed("data-5", true, false);
        claimed("busy", true, false);
        admin.pods().inNamespace(APPS).resource(new PodBuilder().withNewMetadata().withName("busy-pod").endMetadata().withNewSpec()
                .withNodeName("node-a").addNewContainer().withName("c").withImage("app:none").endContainer().addNewVolume().withName("v")
                .withNewPersistentVolumeClaim().withClaimName("busy").endPersistentVolumeClaim().endVolume().endSpec().build()).create();
    }

    /**
     * A claim of the xfs or block class bound to a volume on node-a, as csi-provisioner leaves it (the
     * CreateVolume named after the PV, the PV with the claim's UID, bound by kube-controller-manager),
     * with content: a file written through the node's mount (xfs) or bytes at two places of the image (block).
     */
    static void claimed(String name, boolean block, boolean thick) throws Exception {
        PersistentVolumeClaim pvc = admin.persistentVolumeClaims().inNamespace(APPS).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(name).addToLabels("app", "evac").addToLabels("claim", name)
                .addToAnnotations("example.com/owner", "team-" + name).addToAnnotations("volume.kubernetes.io/selected-node", "node-a")
                .endMetadata().withNewSpec().withStorageClassName(block ? "ev-block" : "ev-xfs").withAccessModes("ReadWriteOnce")
                .withVolumeMode(block ? "Block" : "Filesystem").withNewResources().addToRequests("storage", new Quantity(block ? "64Mi" : "512Mi"))
                .endResources().endSpec().build()).create();
        String pvName = "pvc-" + pvc.getMetadata().getUid();
        long bytes = (block ? 64 : 512) * MI;
        VolumeMeta v = controllerCode.createVolume(new CreateRequest(pvName, bytes, 0, block ? VolumeMode.BLOCK : VolumeMode.FILESYSTEM,
                block ? "" : "xfs", null, null, Map.of("csi.storage.k8s.io/pvc/name", name, "csi.storage.k8s.io/pvc/namespace", APPS,
                        "csi.storage.k8s.io/pv/name", pvName),
                thick ? MutableParameters.parse("p", Map.of("provisioning", "thick")) : MutableParameters.NONE),
                new Placement(List.of("node-a"), List.of("node-a")));
        admin.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName)
                .addToAnnotations("pv.kubernetes.io/provisioned-by", DRIVER).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity(Long.toString(v.capacityBytes()))))
                .withAccessModes("ReadWriteOnce").withPersistentVolumeReclaimPolicy("Delete").withStorageClassName(block ? "ev-block" : "ev-xfs")
                .withVolumeMode(block ? "Block" : "Filesystem")
                .withNewClaimRef().withNamespace(APPS).withName(name).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .withNewCsi().withDriver(DRIVER).withVolumeHandle(v.id()).withFsType(block ? null : "xfs")
                .addToVolumeAttributes("storage.kubernetes.io/csiProvisionerIdentity", "1-" + DRIVER).endCsi()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey("topology.loopcsi.io/node")
                .withOperator("In").withValues("node-a").endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build()).create();
        await(name + " Bound", () -> "Bound".equals(admin.persistentVolumeClaims().inNamespace(APPS).withName(name).get().getStatus().getPhase()));
        Path image = image("node-a", v.id());
        if (block) {
            byte[] data = new byte[3 * (int) MI];
            new java.util.Random(name.hashCode()).nextBytes(data);
            try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
                f.seek(0);
                f.write(data, 0, (int) MI);
                f.seek(40 * MI);
                f.write(data);
            }
        } else {
            try (CsiClient n = new CsiClient(socketOf("node-a"))) {
                Path target = stage(n, "node-a", v.id());
                Files.writeString(target.resolve("file.txt"), "the data of " + name);
                unstage(n, "node-a", v.id());
            }
        }
        claims.put(name, new Before(v.id(), pvName, pvc.getMetadata().getUid(), digest(image), Files.size(image), block, thick));
    }

    @Test
    @Order(1)
    void theDryRunPrintsThePlanAndChangesNothing() throws Exception {
        Map<String, String> before = objectVersions();
        Launcher.Result help = Launcher.run("evacuate", "--help");
        assertEquals(0, help.exit(), help.out());
        assertTrue(help.out().contains("--keep-source") && help.out().contains("--evict") && help.out().contains("--apply"), help.out());

        Launcher.Result r = Launcher.run("evacuate", "--node", "node-a");
        System.out.println(r.out());
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("dry run, nothing is changed"), r.out());
        for (String c : List.of("data-1", "data-2", "data-3", "data-4", "data-5")) {
            String line = line(r.out(), APPS + "/" + c + " ");
            assertTrue(line.contains(claims.get(c).volumeId()) && line.contains(" node-b ") && line.endsWith(" move"), line);
        }
        assertTrue(line(r.out(), APPS + "/busy ").endsWith("move once its pods stop (or --evict): " + APPS + "/busy-pod"), r.out());
        assertTrue(r.out().contains("6 volume(s) on node node-a: 6 to move (1 once their pods stop), 0 cannot move"), r.out());
        assertEquals(before, objectVersions(), "a dry run changes no PV, claim or LoopVolume");
        assertTrue(admin.resources(LoopVolume.class).withLabel("loopcsi.io/node", "node-b").list().getItems().isEmpty());
    }

    /**
     * --apply --keep-source, killed (SIGKILL) once a first volume has moved and a second one's copy
     * started; run again, it continues and moves the rest. Each claim keeps its name, labels, user
     * annotations and size, Bound to a new PV on node-b whose image has the same bytes; the old
     * volumes stay (Released, Retain); the claim in use by a pod is refused and named, untouched.
     */
    @Test
    @Order(2)
    void anInterruptedApplyIsContinuedByTheNextRunAndMovesEveryClaimKeepingTheSources() throws Exception {
        List<String> args = List.of("evacuate", "--node", "node-a", "--apply", "--keep-source");
        Launcher first = Launcher.start(root, "evacuate-1", args, Map.of());
        await("a first volume moved and a second one's copy started", () -> {
            String log = first.log();
            return log.contains("moved to node-b") && log.split("copying ", -1).length > 2 || !first.isAlive();
        });
        assertTrue(first.isAlive(), "still running when killed:\n" + first.log());
        first.kill();
        System.out.println("---- the run killed:\n" + first.log());
        long bound = claims.keySet().stream().filter(c -> !claims.get(c).pv()
                .equals(admin.persistentVolumeClaims().inNamespace(APPS).withName(c).get().getSpec().getVolumeName())).count();
        assertTrue(bound < 5, "the kill came before every claim had moved");

        Launcher second = Launcher.start(root, "evacuate-2", args, Map.of());
        int exit = second.exitStatus(Duration.ofMinutes(8));
        String out = second.log();
        System.out.println("---- the run that continued:\n" + out);
        assertEquals(1, exit, "one claim could not move");
        assertTrue(out.contains("continue the move (stopped at step"), out);
        assertTrue(out.contains("moved, source kept") && out.contains(APPS + "/busy (" + claims.get("busy").volumeId()
                + "): the claim is in use by " + APPS + "/busy-pod: stop them first (or --evict)"), out);

        for (String c : List.of("data-1", "data-2", "data-3", "data-4", "data-5")) {
            Before b = claims.get(c);
            PersistentVolumeClaim now = admin.persistentVolumeClaims().inNamespace(APPS).withName(c).get();
            assertEquals("Bound", now.getStatus().getPhase(), c);
            assertNotEquals(b.uid(), now.getMetadata().getUid(), c + " was made again");
            assertEquals(Map.of("app", "evac", "claim", c), now.getMetadata().getLabels(), c);
            assertEquals("team-" + c, now.getMetadata().getAnnotations().get("example.com/owner"), c);
            assertNull(now.getMetadata().getAnnotations().get("volume.kubernetes.io/selected-node"), c + ": no stale scheduling annotation");
            assertEquals(new Quantity(b.block() ? "64Mi" : "512Mi"), now.getSpec().getResources().getRequests().get("storage"), c);
            PersistentVolume pv = admin.persistentVolumes().withName(now.getSpec().getVolumeName()).get();
            assertEquals(List.of("node-b"), pv.getSpec().getNodeAffinity().getRequired().getNodeSelectorTerms().get(0).getMatchExpressions().get(0)
                    .getValues(), c);
            assertEquals(DRIVER, pv.getMetadata().getAnnotations().get("pv.kubernetes.io/provisioned-by"));
            assertEquals("Delete", pv.getSpec().getPersistentVolumeReclaimPolicy(), "the class' reclaim policy");
            String id = pv.getSpec().getCsi().getVolumeHandle();
            assertEquals("node-b", admin.resources(LoopVolume.class).withName(POOL + "." + id).get().getSpec().getNode());
            Path moved = image("node-b", id);
            assertEquals(b.imageSize(), Files.size(moved), c);
            assertEquals(b.digest(), digest(moved), c + ": the same bytes on node-b");
            if (b.thick()) {
                assertTrue(du(moved) >= b.imageSize(), c + " is thick on node-b too: du " + du(moved));
            }
            // the source kept: its image on node-a, its PV Released and Retain, the record says so
            assertTrue(Files.exists(image("node-a", b.volumeId())), c + ": source kept");
            PersistentVolume old = admin.persistentVolumes().withName(b.pv()).get();
            assertEquals("Retain", old.getSpec().getPersistentVolumeReclaimPolicy());
            assertTrue(old.getMetadata().getAnnotations().get(MoveRecord.ANNOTATION).contains("\"step\":\"kept\""), c);
        }
        try (CsiClient n = new CsiClient(socketOf("node-b"))) {
            String id = volumeOf("data-1");
            Path target = stage(n, "node-b", id);
            assertEquals("the data of data-1", Files.readString(target.resolve("file.txt")), "the file, read back on node-b");
            unstage(n, "node-b", id);
        }
        Before busy = claims.get("busy");
        PersistentVolume busyPv = admin.persistentVolumes().withName(busy.pv()).get();
        assertEquals("Delete", busyPv.getSpec().getPersistentVolumeReclaimPolicy(), "the refused claim is untouched");
        assertFalse(busyPv.getMetadata().getAnnotations().containsKey(MoveRecord.ANNOTATION));
        assertEquals(busy.uid(), admin.persistentVolumeClaims().inNamespace(APPS).withName("busy").get().getMetadata().getUid());
        assertEquals(busy.digest(), digest(image("node-a", busy.volumeId())));
        assertTrue(admin.resources(LoopTransfer.class).withLabel("loopcsi.io/pool", POOL).list().getItems().isEmpty(),
                "no transfer left authorised");
    }

    /** A run without --keep-source deletes the kept sources (volumes through the driver, then their PVs); the claims stay where they are. */
    @Test
    @Order(3)
    void aRunWithoutKeepSourceDeletesTheKeptSources() throws Exception {
        Launcher.Result r = runToEnd("evacuate-3", "evacuate", "--node", "node-a", "--apply");
        assertEquals(1, r.exit(), r.out());
        for (String c : List.of("data-1", "data-2", "data-3", "data-4", "data-5")) {
            Before b = claims.get(c);
            assertFalse(Files.exists(image("node-a", b.volumeId())), c + ": the old image is gone");
            assertNull(admin.resources(LoopVolume.class).withName(POOL + "." + b.volumeId()).get(), c);
            assertNull(admin.persistentVolumes().withName(b.pv()).get(), c + ": the old PV is gone");
            assertEquals("Bound", admin.persistentVolumeClaims().inNamespace(APPS).withName(c).get().getStatus().getPhase());
        }
    }

    /**
     * --evict: node-a is cordoned and the pod using the last claim is evicted (the test plays kubelet:
     * once the pod is terminating, it is deleted as a kubelet does after stopping its containers);
     * the claim moves (no source kept) and node-a holds nothing: exit 0.
     */
    @Test
    @Order(4)
    void withEvictTheNodeIsCordonedThePodEvictedAndTheLastClaimMoves() throws Exception {
        Thread kubelet = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (System.nanoTime() < deadline) {
                var p = admin.pods().inNamespace(APPS).withName("busy-pod").get();
                if (p == null) {
                    return;
                }
                if (p.getMetadata().getDeletionTimestamp() != null) {
                    admin.pods().inNamespace(APPS).withName("busy-pod").withGracePeriod(0).delete();
                }
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        kubelet.setDaemon(true);
        kubelet.start();
        Launcher.Result r = runToEnd("evacuate-4", "evacuate", "--node", "node-a", "--apply", "--evict");
        kubelet.interrupt();
        assertEquals(0, r.exit(), r.out());
        // the Eviction's version is the one the server gives pods/eviction: policy/v1beta1 on 1.20-1.21, policy/v1 from 1.22
        int minor = Integer.parseInt(admin.getKubernetesVersion().getMinor().replaceAll("\\D", ""));
        String sent = minor >= 22 ? "policy/v1" : "policy/v1beta1";
        assertTrue(r.out().contains("node node-a cordoned") && r.out().contains("pod " + APPS + "/busy-pod evicted (" + sent + " Eviction)"), r.out());
        assertEquals(Boolean.TRUE, admin.nodes().withName("node-a").get().getSpec().getUnschedulable());
        assertEquals(claims.get("busy").digest(), digest(image("node-b", volumeOf("busy"))));
        assertFalse(Files.exists(image("node-a", claims.get("busy").volumeId())));
        Launcher.Result again = Launcher.run("evacuate", "--node", "node-a");
        assertTrue(again.out().contains("no volume of a pool is on node node-a"), again.out());
    }

    // ---- helpers ---------------------------------------------------------------------------------

    static Launcher.Result runToEnd(String log, String... args) throws Exception {
        Launcher l = Launcher.start(root, log, List.of(args), Map.of());
        int exit = l.exitStatus(Duration.ofMinutes(8));
        System.out.println("---- " + log + ":\n" + l.log());
        return new Launcher.Result(exit, l.log());
    }

    static String volumeOf(String claim) {
        String pv = admin.persistentVolumeClaims().inNamespace(APPS).withName(claim).get().getSpec().getVolumeName();
        return admin.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
    }

    static String line(String out, String start) {
        return out.lines().filter(l -> l.startsWith(start)).findFirst().orElse("(no line " + start + " in:\n" + out + ")").stripTrailing();
    }

    /** resourceVersions of every PV, claim and LoopVolume: what a dry run must leave as it is. */
    static Map<String, String> objectVersions() {
        Map<String, String> m = new java.util.TreeMap<>();
        admin.persistentVolumes().list().getItems().forEach(o -> m.put("pv/" + o.getMetadata().getName(), o.getMetadata().getResourceVersion()));
        admin.persistentVolumeClaims().inAnyNamespace().list().getItems()
                .forEach(o -> m.put("pvc/" + o.getMetadata().getName(), o.getMetadata().getResourceVersion()));
        admin.resources(LoopVolume.class).list().getItems().forEach(o -> m.put("lv/" + o.getMetadata().getName(), o.getSpec().getNode()));
        return m;
    }

    static VolumeCapability mount() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("xfs"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static Path kubelet(String n) {
        return root.resolve(n).resolve("var/lib/kubelet");
    }

    /** NodeStage + NodePublish at kubelet's paths on the node; the target. */
    static Path stage(CsiClient n, String node, String id) {
        Path staging = kubelet(node).resolve("plugins/kubernetes.io/csi/pv/" + id + "/globalmount");
        Path target = kubelet(node).resolve("pods/p-" + id + "/volumes/kubernetes.io~csi/" + id + "/mount");
        n.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(mount()).build());
        n.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(mount()).build());
        return target;
    }

    static void unstage(CsiClient n, String node, String id) throws InterruptedException {
        asKubeletDoes(() -> n.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(kubelet(node).resolve("pods/p-" + id + "/volumes/kubernetes.io~csi/" + id + "/mount").toString()).build()));
        asKubeletDoes(() -> n.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(kubelet(node).resolve("plugins/kubernetes.io/csi/pv/" + id + "/globalmount").toString()).build()));
    }

    static void asKubeletDoes(Runnable call) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.ABORTED || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    static Path image(String node, String id) {
        List<String> a = nodePods.get(node).args();
        return Path.of(a.get(a.indexOf("--data-dir") + 1)).resolve("volumes/" + id + ".img");
    }

    static String digest(Path file) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 20];
            for (int n; (n = in.read(buf)) > 0;) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    static long du(Path file) throws Exception {
        Process p = new ProcessBuilder("du", "--block-size=1", file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor();
        return Long.parseLong(out.split("\\s+")[0]);
    }

    static Path socketOf(String n) {
        List<String> a = nodePods.get(n).args();
        return Path.of(a.get(a.indexOf("--endpoint") + 1).substring("unix://".length()));
    }

    /** A kubeconfig with the ServiceAccount's token, as a pod of it authenticates. */
    static Path serviceAccountKubeconfig(String sa, Path file) throws Exception {
        Secret token = await("token of " + sa, () -> admin.secrets().inNamespace(NS).list().getItems().stream()
                .filter(s -> "kubernetes.io/service-account-token".equals(s.getType()) && s.getMetadata().getAnnotations() != null
                        && sa.equals(s.getMetadata().getAnnotations().get("kubernetes.io/service-account.name")))
                .findFirst().orElse(null));
        String jwt = new String(Base64.getDecoder().decode(token.getData().get("token")), StandardCharsets.UTF_8);
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "%s", certificate-authority-data: "%s"}}]
                users: [{name: %s, user: {token: "%s"}}]
                contexts: [{name: x, context: {cluster: c, user: %s}}]
                current-context: x
                """.formatted(admin.getConfiguration().getMasterUrl(), token.getData().get("ca.crt"), sa, jwt, sa));
        return file;
    }

    /**
     * The projected token kubelet would give the node pod on n (as PoolServesVolumesKubeIT.transferToken):
     * the DaemonSet's own pod for n, bound to n as the scheduler would (kube-testenv runs none); a pod
     * made by hand would be deleted by the DaemonSet controller, and its token with it.
     */
    static Path transferToken(DaemonSet ds, String n) throws Exception {
        var pod = await("the DaemonSet's pod for " + n, () -> admin.pods().inNamespace(NS).list().getItems().stream()
                .filter(p -> p.getMetadata().getOwnerReferences().stream().anyMatch(o -> ds.getMetadata().getUid().equals(o.getUid())))
                .filter(p -> n.equals(PoolServesVolumesKubeIT.targetNode(p))).findFirst().orElse(null));
        if (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
            admin.bindings().inNamespace(NS).resource(new io.fabric8.kubernetes.api.model.BindingBuilder().withNewMetadata()
                    .withName(pod.getMetadata().getName()).endMetadata().withNewTarget().withApiVersion("v1").withKind("Node").withName(n)
                    .endTarget().build()).create();
        }
        String podName = pod.getMetadata().getName();
        var bound = await("pod " + podName + " on " + n, () -> {
            var p = admin.pods().inNamespace(NS).withName(podName).get();
            return p != null && n.equals(p.getSpec().getNodeName()) ? p : null;
        });
        String token = admin.serviceAccounts().inNamespace(NS).withName("loopcsi-ev-node").tokenRequest(
                new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder().withNewSpec()
                        .withAudiences(io.loopcsi.transfer.kube.TokenReviewIdentity.AUDIENCE).withExpirationSeconds(3600L)
                        .withNewBoundObjectRef().withApiVersion("v1").withKind("Pod").withName(podName).withUid(bound.getMetadata().getUid())
                        .endBoundObjectRef().endSpec().build()).getStatus().getToken();
        Path file = root.resolve(n + "-transfer.token");
        Files.writeString(file, token);
        return file;
    }

    @AfterAll
    static void stopEverything() throws Exception {
        if (root == null) {
            return;
        }
        if (controllerCode != null) {
            controllerCode.close();
        }
        for (Launcher l : nodes.values()) {
            l.close();
        }
        if (operator != null) {
            operator.stop();
        }
        Path logs = Files.createDirectories(Path.of("target/real-tier-logs"));
        try (var files = Files.list(root)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                Files.copy(f, logs.resolve("ev-" + f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        KernelCleanup.releaseAndDelete(root);
        if (asOperator != null) {
            asOperator.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    static <T> T await(String what, Supplier<T> check) {
        return StoragePoolOperatorKubeTest.await(what, check);
    }
}
