package io.loopcsi.operator.status;

import java.time.Instant;
import java.util.List;

import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.api.StoragePoolStatus;

/**
 * Computes a pool's status from what was observed. Pure: the reconciler gathers the inputs.
 * Ready means the controller has its replica available and every desired node pod is ready;
 * a pool with no matching node is not Ready (it cannot serve a volume anywhere).
 */
public final class PoolStatus {

    /**
     * What the reconciler saw. {@code problem} is a conflict or a failed rollout, null when none;
     * {@code poolNodes} are the nodes' own reports (LoopPoolNode) of their part of the pool;
     * {@code nodePodsRefused} why the API server refuses the node pods ({@link NodePodAdmission}), null when it does not.
     */
    public record Observed(Deployment controller, DaemonSet nodes, PoolVolumes volumes, String problemReason, String problem,
            List<LoopPoolNode> poolNodes, List<String> unsupportedNodes, List<LostNode> lostNodes, String nodePodsRefused) {

        public Observed(Deployment controller, DaemonSet nodes, PoolVolumes volumes, String problemReason, String problem,
                List<LoopPoolNode> poolNodes, List<String> unsupportedNodes, List<LostNode> lostNodes) {
            this(controller, nodes, volumes, problemReason, problem, poolNodes, unsupportedNodes, lostNodes, null);
        }

        public Observed(Deployment controller, DaemonSet nodes, PoolVolumes volumes, String problemReason, String problem,
                List<LoopPoolNode> poolNodes, List<String> unsupportedNodes) {
            this(controller, nodes, volumes, problemReason, problem, poolNodes, unsupportedNodes, List.of());
        }

        public Observed(Deployment controller, DaemonSet nodes, PoolVolumes volumes, String problemReason, String problem) {
            this(controller, nodes, volumes, problemReason, problem, List.of());
        }

        public Observed(Deployment controller, DaemonSet nodes, PoolVolumes volumes, String problemReason, String problem,
                List<LoopPoolNode> poolNodes) {
            this(controller, nodes, volumes, problemReason, problem, poolNodes, List.of());
        }
    }

    private PoolStatus() {
    }

    /** Whether the node's report is recent enough to count: younger than OperatorSettings.nodeReportFresh() (the node serves). */
    static boolean fresh(LoopPoolNode n, Instant now) {
        try {
            return n.getStatus() != null && n.getStatus().getHeartbeatTime() != null
                    && Instant.parse(n.getStatus().getHeartbeatTime()).plus(io.loopcsi.operator.OperatorSettings.nodeReportFresh()).isAfter(now);
        } catch (RuntimeException e) {
            return false;
        }
    }

    public static StoragePoolStatus compute(StoragePool pool, StoragePoolStatus previous, Observed o, Instant now) {
        StoragePoolStatus s = new StoragePoolStatus();
        Long gen = pool.getMetadata().getGeneration();
        s.setObservedGeneration(gen);
        s.setDriverName(pool.driverName());
        int desired = o.nodes() == null || o.nodes().getStatus() == null || o.nodes().getStatus().getDesiredNumberScheduled() == null ? 0
                : o.nodes().getStatus().getDesiredNumberScheduled();
        int ready = o.nodes() == null || o.nodes().getStatus() == null || o.nodes().getStatus().getNumberReady() == null ? 0
                : o.nodes().getStatus().getNumberReady();
        boolean controllerReady = o.controller() != null && o.controller().getStatus() != null
                && o.controller().getStatus().getAvailableReplicas() != null && o.controller().getStatus().getAvailableReplicas() >= 1;
        s.setDesiredNodes(desired);
        s.setReadyNodes(ready);
        s.setNodes(ready + "/" + desired);
        s.setControllerReady(controllerReady);
        s.setCapacity(Quantities.format(Quantities.bytes(pool.getSpec().getCapacityPerNode()) * desired));
        s.setVolumes(o.volumes() == null ? 0 : o.volumes().count());
        s.setAllocated(Quantities.format(o.volumes() == null ? 0 : o.volumes().allocatedBytes()));
        List<LoopPoolNode> reporting = o.poolNodes() == null ? List.of() : o.poolNodes().stream().filter(n -> fresh(n, now)).toList();
        if (!reporting.isEmpty()) {
            // what the nodes themselves report: the pool's real capacity and allocation (snapshots included)
            s.setCapacity(Quantities.format(reporting.stream().mapToLong(n -> n.getStatus().getTotalBytes()).sum()));
            s.setAllocated(Quantities.format(reporting.stream().mapToLong(n -> n.getStatus().getAllocatedBytes()).sum()));
            s.setAvailable(Quantities.format(reporting.stream().mapToLong(n -> n.getStatus().available(false)).sum()));
            s.setAvailableThick(Quantities.format(reporting.stream().mapToLong(n -> n.getStatus().available(true)).sum()));
            s.setReportingNodes(reporting.size());
        }

        List<LostNode> lost = o.lostNodes() == null ? List.of() : o.lostNodes();
        List<String> reserveProblems = HostReserve.problems(o.poolNodes() == null ? List.of() : o.poolNodes());
        List<io.fabric8.kubernetes.api.model.Condition> c = previous == null ? List.of() : previous.getConditions();
        if (o.problem() != null) {
            c = Conditions.set(c, Conditions.READY, false, o.problemReason(), o.problem(), gen, now);
            c = Conditions.set(c, Conditions.PROGRESSING, false, o.problemReason(), "rollout stopped: " + o.problem(), gen, now);
            c = Conditions.set(c, Conditions.DEGRADED, true, o.problemReason(), o.problem(), gen, now);
        } else {
            boolean allReady = controllerReady && desired > 0 && ready == desired;
            String where = "controller " + (controllerReady ? "available" : "not available") + ", node pods " + ready + "/" + desired + " ready";
            String refused = allReady ? null : o.nodePodsRefused();
            String reason = allReady ? "AllComponentsReady" : refused != null ? NodePodAdmission.REASON
                    : desired == 0 && controllerReady ? "NoNodes" : "ComponentsNotReady";
            c = Conditions.set(c, Conditions.READY, allReady, reason,
                    allReady ? "driver " + pool.driverName() + " serves " + desired + " nodes" : refused != null ? where + "; " + refused : where,
                    gen, now);
            c = Conditions.set(c, Conditions.PROGRESSING, !allReady, allReady ? "RolloutComplete" : "RollingOut",
                    allReady ? "every component is up to date and ready" : "objects applied; waiting for pods: " + where, gen, now);
            List<String> unsupported = o.unsupportedNodes() == null ? List.of() : o.unsupportedNodes();
            if (refused != null) {
                c = Conditions.set(c, Conditions.DEGRADED, true, NodePodAdmission.REASON, refused, gen, now);
            } else if (!unsupported.isEmpty()) {
                c = Conditions.set(c, Conditions.DEGRADED, true, UnsupportedNodes.REASON, "loopcsi doctor says these nodes cannot host the"
                        + " pool: " + String.join("; ", unsupported) + " (kubectl logs POD -c doctor for the fixes)", gen, now);
            } else if (!reserveProblems.isEmpty()) {
                c = Conditions.set(c, Conditions.DEGRADED, true, HostReserve.REASON, HostReserve.message(reserveProblems), gen, now);
            } else if (!lost.isEmpty()) {
                c = Conditions.set(c, Conditions.DEGRADED, true, LostNodes.REASON, LostNodes.message(lost, String.valueOf(pool.getSpec().getLostNodes())),
                        gen, now);
            } else {
                c = Conditions.set(c, Conditions.DEGRADED, false, "AsExpected", "no conflict, every object applied", gen, now);
            }
        }
        s.setLostNodes(lost);
        s.setOrphans(Orphans.of(o.poolNodes() == null ? List.of() : o.poolNodes()));
        s.setConditions(c);
        return s;
    }
}
