package io.loopcsi.cli.evacuate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotSpec;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotSpec;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.api.StoragePoolSpec;

class PlanBuilderTest {

    static final Instant NOW = Instant.parse("2026-12-06T02:00:00Z");
    static final long GI = 1L << 30;

    final List<LoopVolume> volumes = new ArrayList<>();
    final List<LoopPoolNode> nodes = new ArrayList<>();
    final List<PersistentVolume> pvs = new ArrayList<>();
    final List<PersistentVolumeClaim> claims = new ArrayList<>();
    final List<Pod> pods = new ArrayList<>();
    final List<StorageClass> classes = new ArrayList<>();
    final List<Node> kubeNodes = new ArrayList<>();
    final List<StoragePool> pools = new ArrayList<>();
    final List<LoopSnapshot> snapshots = new ArrayList<>();
    final List<LoopGroupSnapshot> groups = new ArrayList<>();
    final List<GenericKubernetesResource> contents = new ArrayList<>();

    Plan plan() {
        return PlanBuilder.build(new ClusterState(volumes, nodes, pvs, claims, pods, classes, kubeNodes, pools, snapshots, groups, contents, NOW),
                "node-a", null);
    }

    void snapshot(String id, String sourceVolumeId, String node, String volumeSnapshot) {
        LoopSnapshotSpec s = new LoopSnapshotSpec();
        s.setPool("p");
        s.setDriver("p.loopcsi.io");
        s.setNode(node);
        s.setSourceVolumeId(sourceVolumeId);
        LoopSnapshot ls = new LoopSnapshot();
        ls.getMetadata().setName("p." + id);
        ls.setSpec(s);
        snapshots.add(ls);
        if (volumeSnapshot != null) {
            contents.add(content(id, volumeSnapshot));
        }
    }

    /** A VolumeSnapshotContent as the snapshot controller leaves it: the handle in its status, the VolumeSnapshot in spec. */
    static GenericKubernetesResource content(String handle, String volumeSnapshot) {
        GenericKubernetesResource c = new GenericKubernetesResource();
        c.setApiVersion("snapshot.storage.k8s.io/v1");
        c.setKind("VolumeSnapshotContent");
        c.setAdditionalProperty("spec", Map.of("driver", "p.loopcsi.io", "volumeSnapshotRef", Map.of("namespace", "default", "name",
                volumeSnapshot), "source", Map.of("volumeHandle", "vol-x")));
        c.setAdditionalProperty("status", Map.of("snapshotHandle", handle));
        return c;
    }

    void kubeNode(String name, Map<String, String> labels, boolean cordoned) {
        kubeNodes.add(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata().withNewSpec()
                .withUnschedulable(cordoned).endSpec().build());
    }

    /** The class "local" of the claims claimed() makes, with allowedTopologies of one term per map (ANDed keys within). */
    @SafeVarargs
    final void storageClass(Map<String, List<String>>... terms) {
        StorageClassBuilder b = new StorageClassBuilder().withNewMetadata().withName("local").endMetadata().withProvisioner("p.loopcsi.io");
        for (Map<String, List<String>> t : terms) {
            TopologySelectorTermBuilder tb = new TopologySelectorTermBuilder();
            t.forEach((k, v) -> tb.addNewMatchLabelExpression().withKey(k).withValues(v).endMatchLabelExpression());
            b.addToAllowedTopologies(tb.build());
        }
        classes.add(b.build());
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
                .endMetadata().withNewSpec().withStorageClassName("local").withVolumeName("pv-" + id).withNewResources().addToRequests("storage", new Quantity("1Gi"))
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

    @Test
    void theTargetMeetsTheStorageClassAllowedTopologiesTheNodeLabelsAndIsNotCordoned() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 9 * GI, true, NOW); // most room, but outside the class's topology
        node("node-c", 5 * GI, true, NOW); // cordoned
        node("node-d", 2 * GI, true, NOW);
        kubeNode("node-a", Map.of("zone", "z1"), true);
        kubeNode("node-b", Map.of("zone", "z2"), false);
        kubeNode("node-c", Map.of("zone", "z1"), true);
        kubeNode("node-d", Map.of("zone", "z1"), false);
        storageClass(Map.of("zone", List.of("z1")), Map.of(NewObjects.TOPOLOGY_KEY, List.of("node-a", "node-b"), "zone", List.of("z1")));
        claimed("vol-1", GI, "one");
        Plan p = plan();
        Move m = p.moves().get(0);
        assertEquals("node-d", m.target(), p.table(false));

        classes.clear();
        storageClass(Map.of(NewObjects.TOPOLOGY_KEY, List.of("node-a")), Map.of("zone", List.of("z3")));
        m = plan().moves().get(0);
        assertNull(m.target(), "no admissible node: left untouched");
        assertTrue(m.reason().contains("node-b: outside the allowedTopologies of StorageClass local")
                && m.reason().contains("node-c: cordoned") && m.reason().contains("node-d: outside the allowedTopologies"), m.reason());
        assertTrue(plan().table(false).contains("cannot move: no other node of pool p can take it"), plan().table(false));
    }

    @Test
    void theTargetCarriesThePool() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 9 * GI, true, NOW);
        node("node-c", 2 * GI, true, NOW);
        kubeNode("node-b", Map.of(), false); // relabelled: its node pod is on its way out
        kubeNode("node-c", Map.of("storage", "yes"), false);
        StoragePool pool = new StoragePool();
        pool.getMetadata().setName("p");
        StoragePoolSpec spec = new StoragePoolSpec();
        spec.setNodeSelector(Map.of("storage", "yes"));
        pool.setSpec(spec);
        pools.add(pool);
        claimed("vol-1", GI, "one");
        Move m = plan().moves().get(0);
        assertEquals("node-c", m.target());

        kubeNodes.remove(1);
        m = plan().moves().get(0);
        assertNull(m.target());
        assertTrue(m.reason().contains("node-b: outside the pool's nodeSelector (lacks storage=yes)")
                && m.reason().contains("node-c: no Node object of that name"), m.reason());
    }

    @Test
    void theSnapshotsOfEachVolumeThatStayOnTheNodeAreNamedInThePlan() {
        node("node-a", 10 * GI, true, NOW);
        node("node-b", 9 * GI, true, NOW);
        claimed("vol-1", GI, "one");
        claimed("vol-2", GI, "two");
        snapshot("snap-1", "vol-1", "node-a", "one-monday");
        snapshot("snap-2", "vol-1", "node-a", null); // made outside Kubernetes
        snapshot("snap-3", "vol-9", "node-b", "elsewhere"); // another node's: not this plan's business
        LoopGroupSnapshotSpec gs = new LoopGroupSnapshotSpec();
        gs.setPool("p");
        gs.setDriver("p.loopcsi.io");
        gs.setNode("node-a");
        LoopGroupSnapshotStatus st = new LoopGroupSnapshotStatus();
        LoopGroupSnapshotStatus.Member member = new LoopGroupSnapshotStatus.Member();
        member.setSnapshotId("snap-4");
        member.setSourceVolumeId("vol-2");
        st.getMembers().add(member);
        LoopGroupSnapshot g = new LoopGroupSnapshot();
        g.getMetadata().setName("p.group-1");
        g.setSpec(gs);
        g.setStatus(st);
        groups.add(g);
        contents.add(content("snap-4", "two-nightly"));

        Plan p = plan();
        assertEquals(List.of("VolumeSnapshot default/one-monday (snap-1)", "snap-2 (no VolumeSnapshot names it)"),
                p.moves().get(0).snapshotsLeft());
        assertEquals(List.of("VolumeSnapshot default/two-nightly (snap-4) of group group-1"), p.moves().get(1).snapshotsLeft());
        String table = p.table(false);
        assertTrue(table.contains("snapshots that stay on node node-a") && table.contains("default/one (vol-1): VolumeSnapshot default/one-monday")
                && table.contains("restore it to a claim (made on another node), then snapshot that claim"), table);

        snapshots.clear();
        groups.clear();
        assertEquals("", plan().snapshotsLeft(), "none left: nothing said");
    }
}
