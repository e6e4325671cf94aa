package io.loopcsi.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotSpec;
import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.LostNodePolicy;
import io.loopcsi.operator.desired.Pools;
import io.loopcsi.operator.status.LostNodes;
import io.loopcsi.operator.status.LostNodesTest;

class LostNodeReleaseTest {

    static final long GI = 1L << 30;

    @Test
    void releaseClaimsDeletesTheClaimsVolumesAndRecordsOfDeletedNodesOnly() {
        var pool = Pools.minimal("p1");
        pool.getSpec().setLostNodes(LostNodePolicy.ReleaseClaims);
        var lost = List.of(new LostNode("gone", LostNodes.NODE_DELETED, null, 2, 2 * GI), new LostNode("silent", LostNodes.NOT_REPORTING, null, 1, GI));
        var volumes = List.of(LostNodesTest.volume("vol-1", "gone", GI), LostNodesTest.volume("vol-2", "gone", GI),
                LostNodesTest.volume("vol-3", "silent", GI), LostNodesTest.volume("vol-4", "fine", GI));
        var pvs = List.of(pv("pv-1", "p1.loopcsi.io", "vol-1", "data-0"), pv("pv-3", "p1.loopcsi.io", "vol-3", "data-1"),
                pv("pv-4", "p1.loopcsi.io", "vol-4", "data-2"), pv("other", "other.loopcsi.io", "vol-2", "theirs"));
        var reports = List.of(LostNodesTest.report("gone", java.time.Instant.EPOCH), LostNodesTest.report("silent", java.time.Instant.EPOCH));
        var plan = LostNodeRelease.plan(pool, lost, volumes, List.of(), reports, pvs);
        assertEquals(List.of("gone"), plan.nodes());
        assertEquals(List.of("data-0"), plan.claims().stream().map(r -> r.getName()).toList(), "the claim of the volume on the deleted node");
        assertEquals("uid-data-0", plan.claims().get(0).getUid(), "by UID: a re-created claim of the same name is not touched");
        assertEquals(List.of("pv-1"), plan.persistentVolumes(), "not another driver's PV with the same handle");
        assertEquals(List.of("p1.vol-1", "p1.vol-2"), plan.loopVolumes(), "every volume of the deleted node, with a PV or not");
        assertEquals(List.of(), plan.poolNodes(), "its report stays while volumes name it");

        // once they are gone, the deleted node's report goes too; the silent node's stays
        plan = LostNodeRelease.plan(pool, lost, volumes.subList(2, 4), List.of(), reports, pvs.subList(1, 4));
        assertEquals(List.of("p1.gone"), plan.poolNodes());
        assertTrue(plan.claims().isEmpty() && plan.persistentVolumes().isEmpty() && plan.loopVolumes().isEmpty());
        // ... but not while a snapshot is still recorded on it
        LoopSnapshotSpec snap = new LoopSnapshotSpec();
        snap.setNode("gone");
        plan = LostNodeRelease.plan(pool, lost, volumes.subList(2, 4), List.of(new LoopSnapshot(HandoffNames.object("p1", "snap-1"), snap)),
                reports, pvs.subList(1, 4));
        assertEquals(List.of(), plan.poolNodes());
    }

    @Test
    void keepTouchesNoClaimAndNoVolume() {
        var pool = Pools.minimal("p1");
        var lost = List.of(new LostNode("gone", LostNodes.NODE_DELETED, null, 1, GI));
        var plan = LostNodeRelease.plan(pool, lost, List.of(LostNodesTest.volume("vol-1", "gone", GI)), List.of(),
                List.of(LostNodesTest.report("gone", java.time.Instant.EPOCH)), List.of(pv("pv-1", "p1.loopcsi.io", "vol-1", "data-0")));
        assertEquals(LostNodePolicy.Keep, pool.getSpec().getLostNodes(), "the default");
        assertTrue(plan.claims().isEmpty() && plan.persistentVolumes().isEmpty() && plan.loopVolumes().isEmpty() && plan.poolNodes().isEmpty(),
                plan.toString());
    }

    static PersistentVolume pv(String name, String driver, String handle, String claim) {
        return new PersistentVolumeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi"))).withNewClaimRef().withNamespace("default").withName(claim)
                .withUid("uid-" + claim).endClaimRef().withNewCsi().withDriver(driver).withVolumeHandle(handle).endCsi().endSpec().build();
    }
}
