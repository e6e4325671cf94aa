package io.loopcsi.operator.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.loopcsi.operator.desired.Pools;

class PoolStatusTest {

    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final Instant T1 = Instant.parse("2026-01-01T00:05:00Z");

    @Test
    void readyWhenControllerAvailableAndEveryNodePodReady() {
        var pool = Pools.minimal("p1");
        var dep = new DeploymentBuilder().withNewStatus().withAvailableReplicas(1).endStatus().build();
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(3).withNumberReady(3).endStatus().build();
        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(dep, ds, new PoolVolumes(List.of(), 0), null, null), T0);
        assertTrue(Conditions.isTrue(s.getConditions(), Conditions.READY));
        assertFalse(Conditions.isTrue(s.getConditions(), Conditions.PROGRESSING));
        assertFalse(Conditions.isTrue(s.getConditions(), Conditions.DEGRADED));
        assertEquals("3/3", s.getNodes());
        assertEquals("60Gi", s.getCapacity());
        assertEquals("0", s.getAllocated());
        assertEquals(1L, s.getObservedGeneration());
        assertEquals(1L, Conditions.find(s.getConditions(), Conditions.READY).orElseThrow().getObservedGeneration());
    }

    @Test
    void aNodeWhoseDoctorFailedMakesThePoolDegradedNamingTheNodeAndTheVerdict() {
        var pool = Pools.minimal("p1");
        var dep = new DeploymentBuilder().withNewStatus().withAvailableReplicas(1).endStatus().build();
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(2).withNumberReady(1).endStatus().build();
        String log = "command mkfs.xfs  FAIL   not on PATH\n                  fix: apt-get install xfsprogs\n\n"
                + "verdict: this machine cannot host a pool in /var/lib/loopcsi/p1 (1 failed: command mkfs.xfs)\n";
        var crashing = pod("p1-node-a", "node-b", new io.fabric8.kubernetes.api.model.ContainerStatusBuilder().withName("doctor").withReady(false)
                .withNewState().withNewWaiting().withReason("CrashLoopBackOff").endWaiting().endState()
                .withNewLastState().withNewTerminated().withExitCode(1).withMessage(log).endTerminated().endLastState().build());
        var fine = pod("p1-node-b", "node-a", new io.fabric8.kubernetes.api.model.ContainerStatusBuilder().withName("doctor").withReady(false)
                .withNewState().withNewTerminated().withExitCode(0).endTerminated().endState().build());
        List<String> unsupported = UnsupportedNodes.of(List.of(crashing, fine));
        assertEquals(List.of("node-b: this machine cannot host a pool in /var/lib/loopcsi/p1 (1 failed: command mkfs.xfs)"), unsupported);

        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(dep, ds, null, null, null, List.of(), unsupported), T0);
        var degraded = Conditions.find(s.getConditions(), Conditions.DEGRADED).orElseThrow();
        assertEquals("True", degraded.getStatus());
        assertEquals("NodeNotSupported", degraded.getReason());
        assertTrue(degraded.getMessage().contains("node-b: this machine cannot host a pool") && degraded.getMessage().contains("command mkfs.xfs"),
                degraded.getMessage());
        assertFalse(Conditions.isTrue(s.getConditions(), Conditions.READY));
        assertFalse(Conditions.isTrue(PoolStatus.compute(pool, null, new PoolStatus.Observed(dep, ds, null, null, null, List.of(),
                UnsupportedNodes.of(List.of(fine))), T0).getConditions(), Conditions.DEGRADED), "a doctor that passed is no problem");
    }

    @Test
    void nodePodsRefusedAdmissionAreWhyThePoolIsNotReady() {
        var pool = Pools.minimal("p1");
        var dep = new DeploymentBuilder().withNewStatus().withAvailableReplicas(1).endStatus().build();
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(1).withCurrentNumberScheduled(0).withNumberReady(0)
                .endStatus().build();
        String refused = "node pods of DaemonSet ns/loopcsi-p1-node refused admission (1 of 1 missing): pods \"x\" is forbidden: exceeded quota";
        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(dep, ds, null, null, null, List.of(), List.of(), List.of(), refused), T0);
        var ready = Conditions.find(s.getConditions(), Conditions.READY).orElseThrow();
        assertEquals("False", ready.getStatus());
        assertEquals(NodePodAdmission.REASON, ready.getReason());
        assertTrue(ready.getMessage().endsWith(refused), ready.getMessage());
        var degraded = Conditions.find(s.getConditions(), Conditions.DEGRADED).orElseThrow();
        assertEquals("True", degraded.getStatus());
        assertEquals(NodePodAdmission.REASON, degraded.getReason());
        assertEquals(refused, degraded.getMessage());
    }

    static io.fabric8.kubernetes.api.model.Pod pod(String name, String node, io.fabric8.kubernetes.api.model.ContainerStatus doctor) {
        return new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withNodeName(node)
                .endSpec().withNewStatus().withInitContainerStatuses(doctor).endStatus().build();
    }

    @Test
    void capacityAndAllocationAreWhatTheNodesReportWhileTheyReport() {
        var pool = Pools.minimal("p1");
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(3).withNumberReady(3).endStatus().build();
        var pvs = new PoolVolumes(List.of("pv1"), 5L << 30);
        var a = report("node-a", 20L << 30, 3L << 30, 17L << 30, T1.minusSeconds(10));
        var b = report("node-b", 20L << 30, 1L << 30, 19L << 30, T1.minusSeconds(5));
        var silent = report("node-c", 20L << 30, 9L << 30, 11L << 30, T1.minusSeconds(600));
        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(null, ds, pvs, null, null, List.of(a, b, silent)), T1);
        assertEquals("40Gi", s.getCapacity(), "the nodes that report; a stale report is not counted");
        assertEquals("4Gi", s.getAllocated());
        assertEquals("36Gi", s.getAvailable());
        assertEquals(2, s.getReportingNodes());
        var none = PoolStatus.compute(pool, null, new PoolStatus.Observed(null, ds, pvs, null, null, List.of(silent)), T1);
        assertEquals("60Gi", none.getCapacity(), "no report: capacityPerNode x desired nodes, allocation from the PVs");
        assertEquals("5Gi", none.getAllocated());
    }

    @Test
    void aHostReserveANodeCannotServeFromMakesThePoolDegradedAndTheThickFigureIsSummedApart() {
        var pool = Pools.minimal("p1");
        var dep = new DeploymentBuilder().withNewStatus().withAvailableReplicas(1).endStatus().build();
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(2).withNumberReady(2).endStatus().build();
        var a = report("node-a", 20L << 30, 30L << 30, 10L << 30, T1.minusSeconds(10));
        a.getStatus().setAvailableThickBytes(5L << 30); // thinOvercommit 2 on node-a
        var b = report("node-b", 20L << 30, 0, 0, T1.minusSeconds(5));
        b.getStatus().setAvailableThickBytes(0L);
        b.getStatus().setCapacityProblem("the host reserve 600Gi is not less than the size of the host filesystem under the pool (500Gi)");
        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(dep, ds, null, null, null, List.of(a, b)), T1);
        assertEquals("10Gi", s.getAvailable());
        assertEquals("5Gi", s.getAvailableThick());
        assertEquals("30Gi", s.getAllocated(), "allocated may pass the capacity under overcommit");
        var degraded = Conditions.find(s.getConditions(), Conditions.DEGRADED).orElseThrow();
        assertEquals("True", degraded.getStatus());
        assertEquals(HostReserve.REASON, degraded.getReason());
        assertTrue(degraded.getMessage().contains("node-b: the host reserve 600Gi"), degraded.getMessage());
        assertTrue(Conditions.isTrue(s.getConditions(), Conditions.READY), "the pool still serves from its other nodes");

        b.getStatus().setCapacityProblem(""); // the node's report once the reserve was lowered
        var fixed = PoolStatus.compute(pool, s, new PoolStatus.Observed(dep, ds, null, null, null, List.of(a, b)), T1);
        assertFalse(Conditions.isTrue(fixed.getConditions(), Conditions.DEGRADED));
    }

    @Test
    void aNodeOlderThanTheThickFigureCountsItsOneFigureForBoth() {
        var pool = Pools.minimal("p1");
        var old = report("node-a", 20L << 30, 3L << 30, 17L << 30, T1.minusSeconds(10));
        var s = PoolStatus.compute(pool, null, new PoolStatus.Observed(null, null, null, null, null, List.of(old)), T1);
        assertEquals("17Gi", s.getAvailableThick());
    }

    static io.loopcsi.handoff.LoopPoolNode report(String node, long total, long allocated, long available, Instant heartbeat) {
        var n = new io.loopcsi.handoff.LoopPoolNode("p1." + node, new io.loopcsi.handoff.LoopPoolNodeSpec("p1", "p1.loopcsi.io", node));
        var st = new io.loopcsi.handoff.LoopPoolNodeStatus();
        st.setTotalBytes(total);
        st.setAllocatedBytes(allocated);
        st.setAvailableBytes(available);
        st.setHeartbeatTime(heartbeat.toString());
        n.setStatus(st);
        return n;
    }

    @Test
    void podsNotReadyMeansProgressingAndTransitionTimeMovesOnlyOnChange() {
        var pool = Pools.minimal("p1");
        var ds = new DaemonSetBuilder().withNewStatus().withDesiredNumberScheduled(2).withNumberReady(1).endStatus().build();
        var s1 = PoolStatus.compute(pool, null, new PoolStatus.Observed(null, ds, null, null, null), T0);
        assertFalse(Conditions.isTrue(s1.getConditions(), Conditions.READY));
        assertTrue(Conditions.isTrue(s1.getConditions(), Conditions.PROGRESSING));
        var s2 = PoolStatus.compute(pool, s1, new PoolStatus.Observed(null, ds, null, null, null), T1);
        assertEquals(T0.toString(), Conditions.find(s2.getConditions(), Conditions.READY).orElseThrow().getLastTransitionTime());
        var conflict = PoolStatus.compute(pool, s2, new PoolStatus.Observed(null, ds, null, "NameConflict", "StorageClass fast"), T1);
        assertTrue(Conditions.isTrue(conflict.getConditions(), Conditions.DEGRADED));
        assertEquals("NameConflict", Conditions.find(conflict.getConditions(), Conditions.READY).orElseThrow().getReason());
        assertEquals(T1.toString(), Conditions.find(conflict.getConditions(), Conditions.DEGRADED).orElseThrow().getLastTransitionTime());
    }

    @Test
    void volumesOfTheDriverOnlyCountAndAddUp() {
        var mine = new PersistentVolumeBuilder().withNewMetadata().withName("pv-a").endMetadata().withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi"))).withNewCsi().withDriver("p1.loopcsi.io").withVolumeHandle("a").endCsi()
                .endSpec().build();
        var other = new PersistentVolumeBuilder().withNewMetadata().withName("pv-b").endMetadata().withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("5Gi"))).withNewCsi().withDriver("other").withVolumeHandle("b").endCsi()
                .endSpec().build();
        var v = PoolVolumes.of(List.of(mine, other), "p1.loopcsi.io");
        assertEquals(List.of("pv-a"), v.names());
        assertEquals(1L << 30, v.allocatedBytes());
        assertEquals("1Gi", Quantities.format(v.allocatedBytes()));
        assertEquals("pv-a, pv-b and 1 more", new PoolVolumes(List.of("pv-a", "pv-b", "pv-c"), 0).describe(2));
    }
}
