package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import csi.v1.CreateVolumeRequest;
import csi.v1.CreateVolumeResponse;
import csi.v1.DeleteVolumeRequest;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.PoolGauges;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.status.Conditions;
import io.loopcsi.operator.status.LostNodes;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.Launcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * A node that is gone, on a REAL kube-apiserver 1.20 with kube-controller-manager (kube-testenv):
 * the operator (in this JVM, as its ServiceAccount) rolls out pool "lost"; its controller and two
 * node processes (node-x, node-y) run from the packaged launcher with the pod specs the operator
 * generated, each with its ServiceAccount's token (as PoolServesVolumesKubeIT). node-y holds a
 * bound claim and a volume without one; then its process is killed (SIGKILL), later its Node object
 * is deleted. What a user sees at each step: the pool's status, its Events, the operator's gauge,
 * what DeleteVolume answers, and with spec.lostNodes: ReleaseClaims the claim released. Then orphans
 * both ways on node-x: an image whose object was deleted by hand, an object whose files were deleted
 * on the host; reported by the node, the pool and the gauge, listed by loopcsi doctor, and removed
 * only on purpose. The test plays csi-provisioner (CreateVolume, the PV) as PoolServesVolumesKubeIT does.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeLossAndOrphansKubeIT {

    static final String NS = "loopcsi-system";
    static final String POOL = "lost";
    static final String DRIVER = "lost.loopcsi.io";
    /** At most: heartbeat stale after 60 s, then up to 30 s until the next periodic reconcile (TwoNodePool.Timing.QUICK: 10 s, 3 s). */
    static final Duration LOST_WAIT = Duration.ofSeconds(150);

    static final SimpleMeterRegistry METRICS = new SimpleMeterRegistry();
    static TwoNodePool pool;
    static KubernetesClient admin;
    static Path controllerSocket;
    static final Map<String, Path> dataDirs = new HashMap<>();

    static String claimedOnY;
    static String pvOnY;
    static String unclaimedOnY;
    static String claimedOnX;

    @BeforeAll
    static void rollOutThePoolAndStartItsPods() throws Exception {
        pool = TwoNodePool.create(new TwoNodePool.Spec("NodeLossAndOrphansKubeIT", POOL, List.of("node-x", "node-y"), """
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: lost}
                spec:
                  capacityPerNode: 2Gi
                  storageClasses: [{name: lost-block, volumeMode: Block}]
                """, () -> new StoragePoolReconciler(new PoolGauges(METRICS)), true, TwoNodePool.Timing.QUICK));
        admin = pool.admin();
        pool.rollOut(a -> {
        });
        controllerSocket = pool.controllerSocket();
        for (String n : List.of("node-x", "node-y")) {
            dataDirs.put(n, pool.dataDir(n));
        }
    }

    @AfterAll
    static void stopEverything() throws Exception {
        if (pool != null) {
            pool.close();
        }
    }

    @Test
    @Order(1)
    void aKilledNodeIsReportedAndWaitedForWhileItsNodeObjectExists() throws Exception {
        claimedOnY = claimedVolume("data-0", "node-y");
        pvOnY = "pv-" + claimedOnY;
        claimedOnX = claimedVolume("data-1", "node-x");
        try (CsiClient c = new CsiClient(controllerSocket)) {
            unclaimedOnY = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("scratch")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(32L << 20)).addVolumeCapabilities(PoolServesVolumesKubeIT.block())
                    .setAccessibilityRequirements(PoolServesVolumesKubeIT.on("node-y")).build()).getVolume().getVolumeId();
        }
        List<LostNode> lostAtStart = admin.resources(StoragePool.class).withName(POOL).get().getStatus().getLostNodes();
        assertTrue(lostAtStart.isEmpty(), () -> "both nodes serve, yet the pool lists " + lostAtStart.stream().map(LostNodes::describe).toList());

        pool.node("node-y").kill();
        StoragePool p = awaitLost("node-y reported NotReporting", "NotReporting");
        LostNode y = p.getStatus().getLostNodes().get(0);
        assertEquals(1, p.getStatus().getLostNodes().size(), "node-x serves: " + p.getStatus().getLostNodes());
        assertEquals(2, y.getVolumes());
        assertEquals((64L << 20) + (32L << 20), y.getVolumeBytes());
        assertNotNull(y.getLastHeartbeat());
        var degraded = Conditions.find(p.getStatus().getConditions(), Conditions.DEGRADED).orElseThrow();
        assertEquals("NodeLost", degraded.getReason());
        assertTrue(degraded.getMessage().contains("node-y (NotReporting, 2 volume(s)"), degraded.getMessage());
        await("a NodeLost Event", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && "NodeLost".equals(e.getReason()) && e.getMessage().contains("node-y")
                        && "Warning".equals(e.getType())));
        await("the operator's gauge", () -> gauge("node-y", "NotReporting") == 2.0);

        // the Node object is there: the node may come back with its files, so nothing is released
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> delete(unclaimedOnY));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertNotNull(admin.resources(LoopVolume.class).withName(POOL + "." + unclaimedOnY).get());
        assertNotNull(admin.persistentVolumeClaims().inNamespace("default").withName("data-0").get());
    }

    @Test
    @Order(2)
    void onceItsNodeObjectIsDeletedDeleteVolumeSucceedsAndKeepLeavesTheClaims() throws Exception {
        admin.nodes().withName("node-y").delete();
        awaitLost("node-y reported NodeDeleted", "NodeDeleted");
        await("a NodeLost Event for the deletion", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && "NodeLost".equals(e.getReason())
                        && e.getMessage().contains("NodeDeleted")));
        await("the gauge says NodeDeleted", () -> gauge("node-y", "NodeDeleted") == 2.0);
        delete(unclaimedOnY); // nothing left to free on a node that is gone
        assertNull(admin.resources(LoopVolume.class).withName(POOL + "." + unclaimedOnY).get());
        // spec.lostNodes: Keep (the default): the claim stays bound for the admin to decide
        Thread.sleep(2000);
        PersistentVolumeClaim claim = admin.persistentVolumeClaims().inNamespace("default").withName("data-0").get();
        assertNotNull(claim);
        assertNull(claim.getMetadata().getDeletionTimestamp());
        assertNotNull(admin.persistentVolumes().withName(pvOnY).get());
    }

    @Test
    @Order(3)
    void releaseClaimsDeletesTheClaimsOfTheDeletedNodeOnly() throws Exception {
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", "{\"spec\": {\"lostNodes\": \"ReleaseClaims\"}}");
        await("the claim on node-y deleted", () -> admin.persistentVolumeClaims().inNamespace("default").withName("data-0").get() == null);
        await("its PV deleted", () -> admin.persistentVolumes().withName(pvOnY).get() == null);
        await("its LoopVolume released", () -> admin.resources(LoopVolume.class).withName(POOL + "." + claimedOnY).get() == null);
        await("a ClaimsReleased Event", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && "ClaimsReleased".equals(e.getReason())
                        && e.getMessage().contains("PersistentVolumeClaim default/data-0")));
        await("node-y's report removed", () -> admin.resources(LoopPoolNode.class).withName(POOL + ".node-y").get() == null);
        await("no node lost any more", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName(POOL).get();
            return x.getStatus().getLostNodes().isEmpty()
                    && Conditions.find(x.getStatus().getConditions(), Conditions.DEGRADED).map(c -> "False".equals(c.getStatus())).orElse(false);
        });
        await("the gauge's series gone", () -> METRICS.find("loopcsi.pool.lost.node.volumes").tag("pool", POOL).gauges().isEmpty());
        // node-x and its claim are untouched
        assertEquals("Bound", admin.persistentVolumeClaims().inNamespace("default").withName("data-1").get().getStatus().getPhase());
        assertNotNull(admin.resources(LoopVolume.class).withName(POOL + "." + claimedOnX).get());
        assertTrue(pool.node("node-x").isAlive());
    }

    @Test
    @Order(4)
    void orphansBothWaysAreReportedListedAndRemovedOnlyOnPurpose() throws Exception {
        String vanished;
        try (CsiClient c = new CsiClient(controllerSocket)) {
            vanished = volume(c, "vanished", "node-x");
        }
        Path volumesDir = dataDirs.get("node-x").resolve("volumes");
        // a volume's files that no object names (as a pool directory restored from a backup has): a copy under another ID
        String stray = "vol-" + "0123456789abcdef".repeat(2);
        Files.copy(volumesDir.resolve(claimedOnX + ".img"), volumesDir.resolve(stray + ".img"));
        Files.writeString(volumesDir.resolve(stray + ".json"), Files.readString(volumesDir.resolve(claimedOnX + ".json")).replace(claimedOnX, stray));
        // files deleted on the host: the object's files are gone
        for (String ext : List.of(".img", ".json")) {
            Files.delete(volumesDir.resolve(vanished + ext));
        }
        await("node-x's audit", () -> {
            var s = admin.resources(LoopPoolNode.class).withName(POOL + ".node-x").get().getStatus();
            return s.getUnclaimed().contains(stray) && s.getMissing().contains(POOL + "." + vanished) && s.getUnclaimedCount() == 1
                    && s.getMissingCount() == 1;
        });
        var orphans = await("the pool's status names them", () -> {
            var o = admin.resources(StoragePool.class).withName(POOL).get().getStatus().getOrphans();
            return o != null && o.size() == 1 && o.get(0).getMissing() == 1 ? o.get(0) : null;
        });
        assertEquals("node-x", orphans.getNode());
        assertEquals(1, orphans.getUnclaimed());
        assertEquals(List.of(stray), orphans.getUnclaimedIds());
        assertEquals(List.of(POOL + "." + vanished), orphans.getMissingObjects());
        await("the gauges", () -> orphanGauge("unclaimed") == 1.0 && orphanGauge("missing") == 1.0);

        // loopcsi doctor on the node lists them, and removes only an unclaimed image, on purpose
        Launcher.Result listed = Launcher.run("doctor", "--data-dir", dataDirs.get("node-x").toString(), "--format", "json");
        assertTrue(listed.out().contains("\"check\" : \"orphans\"") && listed.out().contains(stray) && listed.out().contains(POOL + "." + vanished),
                listed.out());
        Launcher.Result refused = Launcher.run("doctor", "--data-dir", dataDirs.get("node-x").toString(), "--remove-orphan", claimedOnX);
        assertEquals(1, refused.exit(), refused.out());
        assertTrue(Files.exists(volumesDir.resolve(claimedOnX + ".img")), "a claimed volume is never removed");
        Launcher.Result removed = Launcher.run("doctor", "--data-dir", dataDirs.get("node-x").toString(), "--remove-orphan", stray);
        assertEquals(0, removed.exit(), removed.out());
        assertTrue(Files.notExists(volumesDir.resolve(stray + ".img")) && Files.notExists(volumesDir.resolve(stray + ".json")));
        await("the audit no longer lists it", () -> admin.resources(LoopPoolNode.class).withName(POOL + ".node-x").get().getStatus()
                .getUnclaimed().isEmpty());
        await("nor does the gauge", () -> orphanGauge("unclaimed") == -1);
        // a missing volume goes with its claim: DeleteVolume succeeds, nothing is left to free
        delete(vanished);
        assertNull(admin.resources(LoopVolume.class).withName(POOL + "." + vanished).get());
        await("no orphan left on node-x", () -> admin.resources(LoopPoolNode.class).withName(POOL + ".node-x").get().getStatus()
                .getMissing().isEmpty());
    }

    // ---- helpers ------------------------------------------------------------------------------

    static String volume(CsiClient c, String name, String node) {
        return c.controller.createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(32L << 20)).addVolumeCapabilities(PoolServesVolumesKubeIT.block())
                .setAccessibilityRequirements(PoolServesVolumesKubeIT.on(node)).build()).getVolume().getVolumeId();
    }

    static double orphanGauge(String kind) {
        var g = METRICS.find("loopcsi.pool.orphans").tags("pool", POOL, "node", "node-x", "kind", kind).gauge();
        return g == null ? -1 : g.value();
    }

    /** A block claim with its volume on the node, bound as csi-provisioner and kube-controller-manager do; returns the volume ID. */
    static String claimedVolume(String claimName, String node) throws Exception {
        PersistentVolumeClaim pvc = admin.persistentVolumeClaims().inNamespace("default").resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(claimName).withNamespace("default").addToAnnotations("volume.kubernetes.io/selected-node", node)
                .endMetadata().withNewSpec().withStorageClassName("lost-block").withAccessModes("ReadWriteOnce").withVolumeMode("Block")
                .withNewResources().addToRequests("storage", new Quantity("64Mi")).endResources().endSpec().build()).create();
        CreateVolumeResponse r;
        try (CsiClient c = new CsiClient(controllerSocket)) {
            r = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-" + pvc.getMetadata().getUid())
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(64L << 20))
                    .addVolumeCapabilities(PoolServesVolumesKubeIT.block()).setAccessibilityRequirements(PoolServesVolumesKubeIT.on(node)).build());
        }
        String id = r.getVolume().getVolumeId();
        admin.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName("pv-" + id)
                .addToAnnotations("pv.kubernetes.io/provisioned-by", DRIVER).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity(Long.toString(r.getVolume().getCapacityBytes()))))
                .withAccessModes("ReadWriteOnce").withPersistentVolumeReclaimPolicy("Delete").withStorageClassName("lost-block").withVolumeMode("Block")
                .withNewClaimRef().withNamespace("default").withName(claimName).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .withNewCsi().withDriver(DRIVER).withVolumeHandle(id).endCsi()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey("topology.loopcsi.io/node")
                .withOperator("In").withValues(node).endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build()).create();
        await(claimName + " Bound", () -> "Bound".equals(admin.persistentVolumeClaims().inNamespace("default").withName(claimName).get()
                .getStatus().getPhase()));
        return id;
    }

    static StoragePool awaitLost(String what, String reason) {
        return StoragePoolOperatorKubeTest.await(what, LOST_WAIT, () -> {
            StoragePool x = admin.resources(StoragePool.class).withName(POOL).get();
            return x.getStatus() != null && x.getStatus().getLostNodes() != null && x.getStatus().getLostNodes().stream()
                    .anyMatch(n -> "node-y".equals(n.getNode()) && reason.equals(n.getReason())) ? x : null;
        });
    }

    static double gauge(String node, String reason) {
        var g = METRICS.find("loopcsi.pool.lost.node.volumes").tags("pool", POOL, "node", node, "reason", reason).gauge();
        return g == null ? -1 : g.value();
    }

    static void delete(String id) {
        try (CsiClient c = new CsiClient(controllerSocket)) {
            c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        }
    }

    static <T> T await(String what, Supplier<T> check) {
        return StoragePoolOperatorKubeTest.await(what, Duration.ofSeconds(90), check);
    }
}
