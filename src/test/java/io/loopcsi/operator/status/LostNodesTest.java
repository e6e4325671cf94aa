package io.loopcsi.operator.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.LostNodePolicy;
import io.loopcsi.operator.desired.Pools;

/** Also the lost-node fixtures of the operator's tests ({@link #report}, {@link #volume}). */
public class LostNodesTest {

    static final Instant NOW = Instant.parse("2026-01-01T01:00:00Z");
    static final long GI = 1L << 30;

    @Test
    void aSilentNodeIsNotReportingADeletedOneIsNodeDeletedAFreshOneIsNeither() {
        var reports = List.of(report("a", NOW.minusSeconds(5)), report("b", NOW.minusSeconds(300)), report("c", NOW.minusSeconds(300)));
        var volumes = List.of(volume("v1", "b", 2 * GI), volume("v2", "b", GI), volume("v3", "c", GI), volume("v4", "a", GI));
        List<LostNode> lost = LostNodes.of(reports, Set.of("a", "b"), volumes, NOW);
        assertEquals(List.of(new LostNode("b", LostNodes.NOT_REPORTING, NOW.minusSeconds(300).toString(), 2, 3 * GI),
                new LostNode("c", LostNodes.NODE_DELETED, NOW.minusSeconds(300).toString(), 1, GI)), lost);
        // a fresh heartbeat is never lost, even without a Node object
        assertTrue(LostNodes.of(List.of(report("a", NOW)), Set.of(), volumes.subList(3, 4), NOW).isEmpty());
    }

    @Test
    void aShorterFreshnessSetForTheOperatorMakesAQuieterNodeLostSooner() {
        var reports = List.of(report("a", NOW.minusSeconds(20)));
        assertTrue(LostNodes.of(reports, Set.of("a"), List.of(), NOW).isEmpty(), "20 s without a heartbeat: within the default 60 s");
        System.setProperty(io.loopcsi.operator.OperatorSettings.NODE_REPORT_FRESH_PROPERTY, "10s");
        try {
            assertEquals(List.of(new LostNode("a", LostNodes.NOT_REPORTING, NOW.minusSeconds(20).toString(), 0, 0)),
                    LostNodes.of(reports, Set.of("a"), List.of(), NOW));
        } finally {
            System.clearProperty(io.loopcsi.operator.OperatorSettings.NODE_REPORT_FRESH_PROPERTY);
        }
    }

    @Test
    void aNodeThatNeverReportedButHoldsVolumesIsLost() {
        List<LostNode> lost = LostNodes.of(List.of(), Set.of(), List.of(volume("v1", "gone", GI)), NOW);
        assertEquals(List.of(new LostNode("gone", LostNodes.NODE_DELETED, null, 1, GI)), lost);
        assertTrue(LostNodes.describe(lost.get(0)).contains("never reported"), LostNodes.describe(lost.get(0)));
    }

    @Test
    void aNodeThatMadeItsReportAndHasNotWrittenItsFirstHeartbeatIsStartingNotLostUntilTheWindowPasses() {
        LoopPoolNode justMade = new LoopPoolNode(HandoffNames.poolNode("p1", "a"), new LoopPoolNodeSpec("p1", "p1.loopcsi.io", "a"));
        justMade.getMetadata().setCreationTimestamp(NOW.minusSeconds(1).toString());
        var volumes = List.of(volume("v1", "a", GI));
        assertTrue(LostNodes.of(List.of(justMade), Set.of("a"), volumes, NOW).isEmpty(), "made 1 s ago, no heartbeat yet: starting");
        assertEquals(List.of(new LostNode("a", LostNodes.NOT_REPORTING, null, 1, GI)),
                LostNodes.of(List.of(justMade), Set.of("a"), volumes, NOW.plusSeconds(60)), "still no heartbeat 61 s after it was made");
        LoopPoolNode noCreation = new LoopPoolNode(HandoffNames.poolNode("p1", "a"), new LoopPoolNodeSpec("p1", "p1.loopcsi.io", "a"));
        assertEquals(1, LostNodes.of(List.of(noCreation), Set.of("a"), volumes, NOW).size(), "no creation time: no grace");
        // a stale heartbeat gets no grace from a recent creation
        LoopPoolNode stale = report("a", NOW.minusSeconds(300));
        stale.getMetadata().setCreationTimestamp(NOW.minusSeconds(1).toString());
        assertEquals(1, LostNodes.of(List.of(stale), Set.of("a"), volumes, NOW).size());
    }

    @Test
    void anEventForEachNewlyLostNodeAndForAChangedReasonOnly() {
        var b = new LostNode("b", LostNodes.NOT_REPORTING, null, 1, GI);
        var c = new LostNode("c", LostNodes.NOT_REPORTING, null, 1, GI);
        var bDeleted = new LostNode("b", LostNodes.NODE_DELETED, null, 1, GI);
        assertEquals(List.of(b), LostNodes.newlyLost(null, List.of(b)));
        assertEquals(List.of(), LostNodes.newlyLost(List.of(b), List.of(new LostNode("b", LostNodes.NOT_REPORTING, null, 2, 2 * GI))));
        assertEquals(List.of(bDeleted, c), LostNodes.newlyLost(List.of(b), List.of(bDeleted, c)));
    }

    @Test
    void aLostNodeMakesThePoolDegradedNamingItsVolumesAndThePolicy() {
        var pool = Pools.minimal("p1");
        var dep = new DeploymentBuilder().withNewStatus().withAvailableReplicas(1).endStatus().build();
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(1).withNumberReady(1).endStatus().build();
        var lost = List.of(new LostNode("b", LostNodes.NODE_DELETED, "2026-01-01T00:55:00Z", 2, 3 * GI));
        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(dep, ds, null, null, null, List.of(), List.of(), lost), NOW);
        assertEquals(lost, s.getLostNodes());
        var degraded = Conditions.find(s.getConditions(), Conditions.DEGRADED).orElseThrow();
        assertEquals("True", degraded.getStatus());
        assertEquals("NodeLost", degraded.getReason());
        assertTrue(degraded.getMessage().contains("b (NodeDeleted, 2 volume(s), 3Gi, last heartbeat 2026-01-01T00:55:00Z)"), degraded.getMessage());
        assertTrue(degraded.getMessage().contains("stay bound (spec.lostNodes: Keep)"), degraded.getMessage());
        assertTrue(Conditions.isTrue(s.getConditions(), Conditions.READY), "the nodes that remain serve: Ready, and Degraded");

        pool.getSpec().setLostNodes(LostNodePolicy.ReleaseClaims);
        s = PoolStatus.compute(pool, s, new PoolStatus.Observed(dep, ds, null, null, null, List.of(), List.of(), lost), NOW);
        assertTrue(Conditions.find(s.getConditions(), Conditions.DEGRADED).orElseThrow().getMessage().contains("are released"));

        s = PoolStatus.compute(pool, s, new PoolStatus.Observed(dep, ds, null, null, null, List.of(), List.of(), List.of()), NOW);
        assertFalse(Conditions.isTrue(s.getConditions(), Conditions.DEGRADED), "back to normal once no node is lost");
        assertEquals(List.of(), s.getLostNodes());
    }

    public static LoopPoolNode report(String node, Instant heartbeat) {
        LoopPoolNode n = new LoopPoolNode(HandoffNames.poolNode("p1", node), new LoopPoolNodeSpec("p1", "p1.loopcsi.io", node));
        LoopPoolNodeStatus s = new LoopPoolNodeStatus();
        s.setHeartbeatTime(heartbeat.toString());
        n.setStatus(s);
        return n;
    }

    public static LoopVolume volume(String id, String node, long bytes) {
        LoopVolumeSpec spec = new LoopVolumeSpec();
        spec.setPool("p1");
        spec.setNode(node);
        spec.setRequiredBytes(bytes);
        LoopVolume v = new LoopVolume(HandoffNames.object("p1", id), spec);
        LoopVolumeStatus s = new LoopVolumeStatus();
        s.setCapacityBytes(bytes);
        v.setStatus(s);
        return v;
    }
}
