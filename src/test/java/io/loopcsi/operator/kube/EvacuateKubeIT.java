package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
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
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.cli.evacuate.MoveRecord;
import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.Launcher;

/**
 * Issue 35, part 3: {@code loopcsi evacuate}, run by the packaged launcher as an admin runs it (the
 * kube-testenv admin's $KUBECONFIG), on a REAL kube-apiserver 1.20 with kube-controller-manager (the
 * PV controller binds the claims, pvc-protection holds a claim in use). The operator (in this JVM)
 * rolls out pool "ev" with {@link TwoNodePool}: its two node processes (node-ev-a, node-ev-b: Nodes of
 * its own, as it cordons one, and a cordoned Node gets no DaemonSet pod for the next test) run from the
 * packaged launcher with the DaemonSet's pod spec and their ServiceAccount's token, each serving
 * transfers. No controller
 * process: the test makes its volumes through the controller's own code (ApiVolumeProvider) and
 * writes claims and PVs as csi-provisioner and a user would; the evacuation is the controller for the
 * copies it makes. node-ev-a holds five claimed volumes (two xfs with a file each, three block with
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

    static TwoNodePool pool;
    static KubernetesClient admin;
    static ApiVolumeProvider controllerCode;
    static Path root;
    /** claim name -> what it was before the move. */
    static final Map<String, Before> claims = new LinkedHashMap<>();

    record Before(String volumeId, String pv, String uid, String digest, long imageSize, boolean block, boolean thick) {
    }

    @BeforeAll
    static void rollOutThePoolWithTwoNodesAndFillNodeA() throws Exception {
        pool = TwoNodePool.create(new TwoNodePool.Spec("EvacuateKubeIT", POOL, List.of("node-ev-a", "node-ev-b"), """
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: ev}
                spec:
                  capacityPerNode: 8Gi
                  fsTypes: [xfs]
                  storageClasses:
                    - {name: ev-xfs, volumeMode: Filesystem, fsType: xfs}
                    - {name: ev-block, volumeMode: Block}
                """, StoragePoolReconciler::new, false, null));
        admin = pool.admin();
        root = pool.root();
        pool.rollOut(a -> {
        });
        controllerCode = pool.closeFirst(new ApiVolumeProvider(admin, POOL, DRIVER, Duration.ofSeconds(100), Duration.ofSeconds(60),
                Clock.systemUTC()).start());
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
                .withNodeName("node-ev-a").addNewContainer().withName("c").withImage("app:none").endContainer().addNewVolume().withName("v")
                .withNewPersistentVolumeClaim().withClaimName("busy").endPersistentVolumeClaim().endVolume().endSpec().build()).create();
    }

    /**
     * A claim of the xfs or block class bound to a volume on node-ev-a, as csi-provisioner leaves it (the
     * CreateVolume named after the PV, the PV with the claim's UID, bound by kube-controller-manager),
     * with content: a file written through the node's mount (xfs) or bytes at two places of the image (block).
     */
    static void claimed(String name, boolean block, boolean thick) throws Exception {
        ProvisionedClaim made = ProvisionedClaim.make(admin, controllerCode, DRIVER, APPS, name, block ? "ev-block" : "ev-xfs", block,
                block ? "64Mi" : "512Mi", thick, "node-ev-a", Map.of("app", "evac", "claim", name), Map.of("example.com/owner", "team-" + name));
        VolumeMeta v = made.volume();
        PersistentVolumeClaim pvc = made.claim();
        String pvName = made.pv();
        Path image = image("node-ev-a", v.id());
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
            try (CsiClient n = new CsiClient(socketOf("node-ev-a"))) {
                Path target = stage(n, "node-ev-a", v.id());
                Files.writeString(target.resolve("file.txt"), "the data of " + name);
                unstage(n, "node-ev-a", v.id());
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

        Launcher.Result r = Launcher.run("evacuate", "--node", "node-ev-a");
        System.out.println(r.out());
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("dry run, nothing is changed"), r.out());
        for (String c : List.of("data-1", "data-2", "data-3", "data-4", "data-5")) {
            String line = line(r.out(), APPS + "/" + c + " ");
            assertTrue(line.contains(claims.get(c).volumeId()) && line.contains(" node-ev-b ") && line.endsWith(" move"), line);
        }
        assertTrue(line(r.out(), APPS + "/busy ").endsWith("move once its pods stop (or --evict): " + APPS + "/busy-pod"), r.out());
        assertTrue(r.out().contains("6 volume(s) on node node-ev-a: 6 to move (1 once their pods stop), 0 cannot move"), r.out());
        assertEquals(before, objectVersions(), "a dry run changes no PV, claim or LoopVolume");
        assertTrue(admin.resources(LoopVolume.class).withLabel("loopcsi.io/node", "node-ev-b").list().getItems().isEmpty());

        // the only other node cordoned: no claim can go there (the workload could not follow it),
        // each is named with the reason, and nothing changes (TargetRules, read from the real Node)
        admin.nodes().withName("node-ev-b").edit(n -> {
            n.getSpec().setUnschedulable(true);
            return n;
        });
        try {
            Launcher.Result cordoned = Launcher.run("evacuate", "--node", "node-ev-a");
            assertEquals(0, cordoned.exit(), cordoned.out());
            String line = line(cordoned.out(), APPS + "/data-1 ");
            assertTrue(line.contains("cannot move: no other node of pool") , cordoned.out());
            assertTrue(cordoned.out().contains("node-ev-b: cordoned"), cordoned.out());
            assertTrue(cordoned.out().contains("6 volume(s) on node node-ev-a: 0 to move"), cordoned.out());
        } finally {
            admin.nodes().withName("node-ev-b").edit(n -> {
                n.getSpec().setUnschedulable(null);
                return n;
            });
        }
        assertEquals(before, objectVersions(), "a dry run changes no PV, claim or LoopVolume");
    }

    /**
     * --apply --keep-source, killed (SIGKILL) once a first volume has moved and a second one's copy
     * started; run again, it continues and moves the rest. Each claim keeps its name, labels, user
     * annotations and size, Bound to a new PV on node-ev-b whose image has the same bytes; the old
     * volumes stay (Released, Retain); the claim in use by a pod is refused and named, untouched.
     */
    @Test
    @Order(2)
    void anInterruptedApplyIsContinuedByTheNextRunAndMovesEveryClaimKeepingTheSources() throws Exception {
        List<String> args = List.of("evacuate", "--node", "node-ev-a", "--apply", "--keep-source");
        Launcher first = Launcher.start(root, "evacuate-1", args, Map.of());
        await("a first volume moved and a second one's copy started", () -> {
            String log = first.log();
            return log.contains("moved to node-ev-b") && log.split("copying ", -1).length > 2 || !first.isAlive();
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
            assertEquals("node-ev-a", now.getMetadata().getAnnotations().get("loopcsi.io/moved-from"), c);
            assertEquals(new Quantity(b.block() ? "64Mi" : "512Mi"), now.getSpec().getResources().getRequests().get("storage"), c);
            PersistentVolume pv = admin.persistentVolumes().withName(now.getSpec().getVolumeName()).get();
            assertEquals(List.of("node-ev-b"), pv.getSpec().getNodeAffinity().getRequired().getNodeSelectorTerms().get(0).getMatchExpressions().get(0)
                    .getValues(), c);
            assertEquals(DRIVER, pv.getMetadata().getAnnotations().get("pv.kubernetes.io/provisioned-by"));
            assertEquals("Delete", pv.getSpec().getPersistentVolumeReclaimPolicy(), "the class' reclaim policy");
            String id = pv.getSpec().getCsi().getVolumeHandle();
            assertEquals("node-ev-b", admin.resources(LoopVolume.class).withName(POOL + "." + id).get().getSpec().getNode());
            Path moved = image("node-ev-b", id);
            assertEquals(b.imageSize(), Files.size(moved), c);
            assertEquals(b.digest(), digest(moved), c + ": the same bytes on node-ev-b");
            if (b.thick()) {
                assertTrue(du(moved) >= b.imageSize(), c + " is thick on node-ev-b too: du " + du(moved));
            }
            // the source kept: its image on node-ev-a, its PV Released and Retain, the record says so
            assertTrue(Files.exists(image("node-ev-a", b.volumeId())), c + ": source kept");
            PersistentVolume old = admin.persistentVolumes().withName(b.pv()).get();
            assertEquals("Retain", old.getSpec().getPersistentVolumeReclaimPolicy());
            assertTrue(old.getMetadata().getAnnotations().get(MoveRecord.ANNOTATION).contains("\"step\":\"kept\""), c);
        }
        try (CsiClient n = new CsiClient(socketOf("node-ev-b"))) {
            String id = volumeOf("data-1");
            Path target = stage(n, "node-ev-b", id);
            assertEquals("the data of data-1", Files.readString(target.resolve("file.txt")), "the file, read back on node-ev-b");
            unstage(n, "node-ev-b", id);
        }
        Before busy = claims.get("busy");
        PersistentVolume busyPv = admin.persistentVolumes().withName(busy.pv()).get();
        assertEquals("Delete", busyPv.getSpec().getPersistentVolumeReclaimPolicy(), "the refused claim is untouched");
        assertFalse(busyPv.getMetadata().getAnnotations().containsKey(MoveRecord.ANNOTATION));
        assertEquals(busy.uid(), admin.persistentVolumeClaims().inNamespace(APPS).withName("busy").get().getMetadata().getUid());
        assertEquals(busy.digest(), digest(image("node-ev-a", busy.volumeId())));
        assertTrue(admin.resources(LoopTransfer.class).withLabel("loopcsi.io/pool", POOL).list().getItems().isEmpty(),
                "no transfer left authorised");
    }

    /** A run without --keep-source deletes the kept sources (volumes through the driver, then their PVs); the claims stay where they are. */
    @Test
    @Order(3)
    void aRunWithoutKeepSourceDeletesTheKeptSources() throws Exception {
        Launcher.Result r = runToEnd("evacuate-3", "evacuate", "--node", "node-ev-a", "--apply");
        assertEquals(1, r.exit(), r.out());
        for (String c : List.of("data-1", "data-2", "data-3", "data-4", "data-5")) {
            Before b = claims.get(c);
            assertFalse(Files.exists(image("node-ev-a", b.volumeId())), c + ": the old image is gone");
            assertNull(admin.resources(LoopVolume.class).withName(POOL + "." + b.volumeId()).get(), c);
            assertNull(admin.persistentVolumes().withName(b.pv()).get(), c + ": the old PV is gone");
            assertEquals("Bound", admin.persistentVolumeClaims().inNamespace(APPS).withName(c).get().getStatus().getPhase());
        }
    }

    /**
     * --evict: node-ev-a is cordoned and the pod using the last claim is evicted (the test plays kubelet:
     * once the pod is terminating, it is deleted as a kubelet does after stopping its containers);
     * the claim moves (no source kept) and node-ev-a holds nothing: exit 0.
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
        Launcher.Result r = runToEnd("evacuate-4", "evacuate", "--node", "node-ev-a", "--apply", "--evict");
        kubelet.interrupt();
        assertEquals(0, r.exit(), r.out());
        // the Eviction's version is the one the server gives pods/eviction: policy/v1beta1 on 1.20-1.21, policy/v1 from 1.22
        int minor = Integer.parseInt(admin.getKubernetesVersion().getMinor().replaceAll("\\D", ""));
        String sent = minor >= 22 ? "policy/v1" : "policy/v1beta1";
        assertTrue(r.out().contains("node node-ev-a cordoned") && r.out().contains("pod " + APPS + "/busy-pod evicted (" + sent + " Eviction)"), r.out());
        assertEquals(Boolean.TRUE, admin.nodes().withName("node-ev-a").get().getSpec().getUnschedulable());
        assertEquals(claims.get("busy").digest(), digest(image("node-ev-b", volumeOf("busy"))));
        assertFalse(Files.exists(image("node-ev-a", claims.get("busy").volumeId())));
        Launcher.Result again = Launcher.run("evacuate", "--node", "node-ev-a");
        assertTrue(again.out().contains("no volume of a pool is on node node-ev-a"), again.out());
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
        return pool.kubeletDir(n);
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
        return pool.dataDir(node).resolve("volumes/" + id + ".img");
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
        return pool.socketOf(n);
    }

    @AfterAll
    static void stopEverything() throws Exception {
        if (pool != null) {
            pool.close();
        }
    }

    static <T> T await(String what, Supplier<T> check) {
        return StoragePoolOperatorKubeTest.await(what, check);
    }
}
