package io.loopcsi.operator.status;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.LostNode;

/**
 * The nodes of a pool that do not serve it, from the nodes' own reports and the cluster's Node
 * objects. Pure: the reconciler lists them. A node is lost when its LoopPoolNode heartbeat is stale
 * (or it never reported but has volumes, or its LoopPoolNode is older than the freshness window
 * without a heartbeat); it is {@link #NODE_DELETED} when its Node object is gone
 * too, else {@link #NOT_REPORTING} (it may come back with its files, so nothing is done about it).
 * A fresh heartbeat is never lost, whatever the Node objects say.
 */
public final class LostNodes {

    public static final String NOT_REPORTING = "NotReporting";
    public static final String NODE_DELETED = "NodeDeleted";
    /** The Degraded reason while a node is lost. */
    public static final String REASON = "NodeLost";

    private LostNodes() {
    }

    /**
     * @param reports the pool's LoopPoolNodes
     * @param nodes   names of the cluster's Node objects
     * @param volumes the pool's LoopVolumes (counted per spec.node)
     */
    public static List<LostNode> of(Collection<LoopPoolNode> reports, Set<String> nodes, Collection<LoopVolume> volumes, Instant now) {
        Map<String, LoopPoolNode> byNode = new TreeMap<>();
        for (LoopPoolNode r : reports) {
            if (r.getSpec() != null && r.getSpec().getNode() != null) {
                byNode.put(r.getSpec().getNode(), r);
            }
        }
        Set<String> candidates = new TreeSet<>(byNode.keySet());
        volumes.stream().map(v -> v.getSpec() == null ? null : v.getSpec().getNode()).filter(Objects::nonNull).forEach(candidates::add);
        List<LostNode> out = new ArrayList<>();
        for (String node : candidates) {
            LoopPoolNode r = byNode.get(node);
            if (r != null && (PoolStatus.fresh(r, now) || starting(r, now))) {
                continue;
            }
            List<LoopVolume> on = volumes.stream().filter(v -> v.getSpec() != null && node.equals(v.getSpec().getNode())).toList();
            long bytes = on.stream().mapToLong(LostNodes::bytes).sum();
            String heartbeat = r == null || r.getStatus() == null ? null : r.getStatus().getHeartbeatTime();
            out.add(new LostNode(node, nodes.contains(node) ? NOT_REPORTING : NODE_DELETED, heartbeat, on.size(), bytes));
        }
        return out;
    }

    /**
     * A LoopPoolNode its node has just made and not yet written a status into: a node creates the
     * object, then writes its first heartbeat (the status subresource cannot be set on create), so a
     * list between the two must not call a starting node lost, nor put a NodeLost Warning on the pool
     * (issue: NodeLossAndOrphansKubeIT "both nodes serve", CI of stop 45). It is treated as a heartbeat
     * at its creation: still silent after the freshness window, it is lost as any other.
     */
    static boolean starting(LoopPoolNode r, Instant now) {
        if (r.getStatus() != null && r.getStatus().getHeartbeatTime() != null) {
            return false;
        }
        String created = r.getMetadata() == null ? null : r.getMetadata().getCreationTimestamp();
        try {
            return created != null && Instant.parse(created).plus(io.loopcsi.operator.OperatorSettings.nodeReportFresh()).isAfter(now);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A volume's size: what its node made, else what was asked for. */
    static long bytes(LoopVolume v) {
        if (v.created()) {
            return v.getStatus().getCapacityBytes();
        }
        return v.getSpec().getRequiredBytes() == null ? 0 : v.getSpec().getRequiredBytes();
    }

    /** The entries of {@code next} that are new or changed their reason since {@code previous} (each gets an Event). */
    public static List<LostNode> newlyLost(List<LostNode> previous, List<LostNode> next) {
        List<LostNode> out = new ArrayList<>();
        for (LostNode n : next) {
            boolean known = previous != null && previous.stream().anyMatch(p -> n.getNode().equals(p.getNode()) && n.getReason().equals(p.getReason()));
            if (!known) {
                out.add(n);
            }
        }
        return out;
    }

    /** One node for a message: "node-b (NodeDeleted, 2 volume(s), 3Gi, last heartbeat 2026-...)". */
    public static String describe(LostNode n) {
        return n.getNode() + " (" + n.getReason() + ", " + n.getVolumes() + " volume(s), " + Quantities.format(n.getVolumeBytes()) + ", "
                + (n.getLastHeartbeat() == null ? "never reported" : "last heartbeat " + n.getLastHeartbeat()) + ")";
    }

    /** What the Degraded condition says. */
    public static String message(List<LostNode> lost, String policy) {
        List<String> parts = lost.stream().map(LostNodes::describe).toList();
        boolean deleted = lost.stream().anyMatch(n -> NODE_DELETED.equals(n.getReason()));
        String what = !deleted ? "; a node that is only silent is waited for (restart its node pod, or delete its Node object if it is gone for good)"
                : "ReleaseClaims".equals(policy) ? "; the claims of deleted nodes are released (spec.lostNodes: ReleaseClaims)"
                : "; the claims of deleted nodes stay bound (spec.lostNodes: Keep): delete them, or set spec.lostNodes: ReleaseClaims";
        return "nodes not serving the pool: " + String.join("; ", parts) + what;
    }
}
