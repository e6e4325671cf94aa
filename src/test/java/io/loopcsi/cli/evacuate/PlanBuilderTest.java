package io.loopcsi.cli.evacuate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;

class PlanBuilderTest {

    static final Instant NOW = Instant.parse("2026-12-06T02:00:00Z");
    static final long GI = 1L << 30;

    final List<LoopVolume> volumes = new ArrayList<>();
    final List<LoopPoolNode> nodes = new ArrayList<>();
    final List<PersistentVolume> pvs = new ArrayList<>();
    final List<PersistentVolumeClaim> claims = new ArrayList<>();
    final List<Pod> pods = new ArrayList<>();

    Plan plan() {
        return PlanBuilder.build(new ClusterState(volumes, nodes, pvs, claims, pods, NOW), "node-a", null);
    }

    void node(String name, long available, boolean transfer, Instant heartbeat) {
        LoopPoolNodeSpec s = new LoopPoolNodeSpec();
        s.setPool("p");
        s.setNode(name);
        LoopPoolNode n = new LoopPoolNode();
        n.getMetadata().setName("p." + name);
        n.setSpec(s);
        LoopPoolNodeStatus st = new LoopPoolNodeStatus();
        st.setAvailableBytes(available);
        st.setAvailableThickBytes(available);
        st.setHeartbeatTime(heartbeat.toString());
        if (transfer) {
            st.setTransferAddress("10.0.0.1:9443");
            st.setTransferCertificateSha256("ab".repeat(32));
        }
        n.setStatus(st);
        nodes.add(n);
    }

    /** A volume on node-a, its PV and claim bound to each other, as csi-provisioner and kube-controller-manager leave them. */
    void claimed(String id, long bytes, String claim) {
        LoopVolumeSpec s = new LoopVolumeSpec();
        s.setPool("p");
        s.setDriver("p.loopcsi.io");
        s.setNode("node-a");
        s.setMode(VolumeMode.FILESYSTEM);
        s.setFsType("xfs");
        LoopVolume v = new LoopVolume("p." + id, s);
        LoopVolumeStatus st = new LoopVolumeStatus();
        st.setCapacityBytes(bytes);
        st.setPhase("Ready");
        v.setStatus(st);
        volumes.add(v);
        if (claim == null) {
            return;
        }
        claims.add(new PersistentVolumeClaimBuilder().withNewMetadata().withNamespace("default").withName(claim).withUid("uid-" + claim)
                .endMetadata().withNewSpec().withVolumeName("pv-" + id).withNewResources().addToRequests("storage", new Quantity("1Gi"))
                .endResources().endSpec().withNewStatus().withPhase("Bound").endStatus().build());
        pvs.add(new PersistentVolumeBuilder().withNewMetadata().withName("pv-" + id).endMetadata().withNewSpec().withNewCsi()
                .withDriver("p.loopcsi.io").withVolumeHandle(id).endCsi().withNewClaimRef().withNamespace("default").withName(claim)
                .withUid("uid-" + claim).endClaimRef().endSpec().withNewStatus().withPhase("Bound").endStatus().build());
    }

    Pod pod(String name, String claim, String nodeName, String phase) {
        Pod p = new PodBuilder().withNewMetadata().withNamespace("default").withName(name).endMetadata().withNewSpec().withNodeName(nodeName)
                .addNewVolume().withName("v").withNewPersistentVolumeClaim().withClaimName(claim).endPersistentVolumeClaim().endVolume()
                .endSpec().withNewStatus().withPhase(phase).endStatus().build();
        pods.add(p);
        return p;
    }

    @Test
    void eachClaimedVolumeGoesToTheNodeWithMostRoomCountingWhatThePlanSendsThere() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 3 * GI, true, NOW);
        node("node-c", 2 * GI, true, NOW);
        claimed("vol-1", 2 * GI, "one");
        claimed("vol-2", 2 * GI, "two");
        Plan p = plan();
        assertEquals(List.of("node-b", "node-c"), p.moves().stream().map(Move::target).toList(), p.table(false));
        assertEquals(List.of("default/one", "default/two"), p.moves().stream().map(Move::claim).toList());
        assertEquals(PlanBuilder.newPvName("pv-vol-1", "node-a"), p.moves().get(0).newPv());
        assertTrue(p.moves().get(0).newPv().matches("pvc-[0-9a-f-]{36}"), p.moves().get(0).newPv());
    }

    @Test
    void aVolumeWithoutRoomElsewhereOrWithoutAClaimIsNamedWithTheReason() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", GI, true, NOW);
        node("node-c", 9 * GI, false, NOW); // room, but no transfer endpoint
        node("node-d", 9 * GI, true, NOW.minusSeconds(600)); // room, silent
        claimed("vol-1", 2 * GI, "big");
        claimed("vol-2", GI, null);
        Plan p = plan();
        Move big = p.moves().get(0);
        assertNull(big.target());
        assertTrue(big.reason().contains("node-b: 1Gi available") && big.reason().contains("node-c: publishes no transfer endpoint")
                && big.reason().contains("node-d: not serving"), big.reason());
        assertTrue(p.moves().get(1).reason().startsWith("no PersistentVolume names it"), p.moves().get(1).reason());
        assertTrue(p.table(false).contains("2 volume(s) on node node-a: 0 to move, 2 cannot move"), p.table(false));
    }

    @Test
    void theEvacuatedNodeMustServeToSendTheData() {
        node("node-a", 10 * GI, true, NOW.minusSeconds(3600));
        node("node-b", 9 * GI, true, NOW);
        claimed("vol-1", GI, "one");
        assertTrue(plan().moves().get(0).reason().contains("node node-a itself does not serve pool p"), plan().moves().get(0).reason());
    }

    @Test
    void podsScheduledAndNotFinishedHoldTheClaimAsPvcProtectionCountsThem() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 9 * GI, true, NOW);
        claimed("vol-1", GI, "one");
        pod("runs", "one", "node-a", "Running");
        pod("done", "one", "node-a", "Succeeded");
        pod("pending", "one", null, "Pending");
        pod("other", "two", "node-a", "Running");
        Move m = plan().moves().get(0);
        assertTrue(m.movable());
        assertEquals(List.of("default/runs"), m.usedBy());
        assertTrue(m.action(false).contains("once its pods stop (or --evict): default/runs"), m.action(false));
    }

    @Test
    void aMoveARunStartedKeepsItsRecordedTargetAndClaim() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 0, true, NOW); // full now: the copy is already there
        claimed("vol-1", GI, "one");
        PersistentVolumeClaim was = claims.remove(0); // deleted by the run that stopped
        MoveRecord r = new MoveRecord("node-a", "node-b", "pvc-new", "Delete", NewObjects.recordOf(was), MoveRecord.CLAIM);
        pvs.get(0).getMetadata().setAnnotations(Map.of(MoveRecord.ANNOTATION, r.json()));
        pvs.get(0).getStatus().setPhase("Released");
        Move m = plan().moves().get(0);
        assertEquals("node-b", m.target());
        assertEquals("pvc-new", m.newPv());
        assertEquals("default/one", m.claim());
        assertEquals(MoveRecord.CLAIM, m.resume());
        assertTrue(m.action(false).startsWith("continue the move (stopped at step claim)"), m.action(false));
    }

    @Test
    void anUnreadableRecordIsNotContinued() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 9 * GI, true, NOW);
        claimed("vol-1", GI, "one");
        pvs.get(0).getMetadata().setAnnotations(Map.of(MoveRecord.ANNOTATION, "{not json"));
        assertTrue(plan().moves().get(0).reason().contains("cannot be read"));
    }
}
