package io.loopcsi.controller;

import java.time.Clock;
import java.time.Duration;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeStatus;

/**
 * The pool's nodes as their LoopPoolNodes report them: which are serving (a fresh heartbeat),
 * where a new volume goes ({@link NodeChooser}), what capacity each has and the pool has in sum,
 * and whether a silent node is gone for good (its Node object deleted).
 */
final class PoolNodes {

    private final PoolInformers informers;
    private final KubernetesClient client;
    private final Duration staleAfter;
    private final Clock clock;

    PoolNodes(PoolInformers informers, KubernetesClient client, Duration staleAfter, Clock clock) {
        this.informers = informers;
        this.client = client;
        this.staleAfter = staleAfter;
        this.clock = clock;
    }

    /** The node for a new volume of this size and provisioning, or the StatusRuntimeException {@link NodeChooser#choose} gives. */
    String choose(Placement placement, long bytes, boolean thick) {
        return NodeChooser.choose(placement, bytes, thick, informers.nodeMap(), clock.instant(), staleAfter);
    }

    /** The node's LoopPoolNode when its heartbeat is fresh, else null (it cannot take or answer anything now). */
    LoopPoolNode serving(String node) {
        LoopPoolNode n = informers.poolNode(node);
        return NodeChooser.fresh(n, clock.instant(), staleAfter) ? n : null;
    }

    /** When the node last reported, for messages. */
    String lastReport(String node) {
        LoopPoolNode n = informers.poolNode(node);
        return n == null || n.getStatus() == null ? null : n.getStatus().getHeartbeatTime();
    }

    /** UNAVAILABLE (retryable) when the node is not serving: what waits for it stays recorded. */
    void checkAlive(String node, String what) {
        if (serving(node) == null) {
            LoopPoolNode n = informers.poolNode(node);
            String since = n == null || n.getStatus() == null ? "never reported (no LoopPoolNode " + HandoffNames.poolNode(informers.pool(), node) + ")"
                    : "last reported at " + n.getStatus().getHeartbeatTime();
            throw Status.UNAVAILABLE.withDescription("node " + node + " is not serving pool " + informers.pool() + " (" + since + "): " + what
                    + " waits for it; the request stays recorded, call again").asRuntimeException();
        }
    }

    /**
     * A node that is gone: its heartbeat is stale and its Node object was deleted. Its files went with
     * the machine (or will never be served again), so there is nothing left to free; a node that only
     * stopped reporting (its Node object still there) is not gone: it may come back with the files.
     */
    boolean gone(String node) {
        if (serving(node) != null) {
            return false;
        }
        return client.nodes().withName(node).get() == null;
    }

    String heartbeatOf(String node) {
        String last = lastReport(node);
        return last == null ? "it never reported" : "last heartbeat " + last;
    }

    /** The sum over the serving nodes. */
    PoolCapacity capacity() {
        long total = 0;
        long allocated = 0;
        long free = 0;
        long available = 0;
        long availableThick = 0;
        long charged = 0;
        long reserve = 0;
        for (LoopPoolNode n : informers.nodeMap().values()) {
            if (NodeChooser.fresh(n, clock.instant(), staleAfter)) {
                PoolCapacity c = reported(n.getStatus());
                total += c.totalBytes();
                allocated += c.allocatedBytes();
                free += c.hostFreeBytes();
                available += c.availableBytes();
                availableThick += c.availableThickBytes();
                charged += c.chargedBytes();
                reserve += c.hostReserveBytes();
            }
        }
        return new PoolCapacity(total, allocated, free, 0, available, availableThick, charged, reserve, 1, "");
    }

    /** A node's capacity as it last published it; none for a node whose heartbeat is stale (it cannot take volumes). */
    PoolCapacity capacity(String node) {
        LoopPoolNode n = serving(node);
        return n == null ? PoolCapacity.NONE : reported(n.getStatus());
    }

    /** A node's report as a PoolCapacity; a node older than the thick figure (issue 24) has one figure for both. */
    static PoolCapacity reported(LoopPoolNodeStatus s) {
        long available = s.getAvailableBytes() == null ? 0 : s.getAvailableBytes();
        long allocated = s.getAllocatedBytes() == null ? 0 : s.getAllocatedBytes();
        return new PoolCapacity(s.getTotalBytes() == null ? 0 : s.getTotalBytes(), allocated,
                s.getHostFreeBytes() == null ? 0 : s.getHostFreeBytes(), 0, available, s.available(true),
                s.getChargedBytes() == null ? allocated : s.getChargedBytes(), s.getHostReserveBytes() == null ? 0 : s.getHostReserveBytes(),
                s.getThinOvercommit() == null ? 1 : s.getThinOvercommit(), s.getCapacityProblem());
    }

    /** The most any single serving node has available (a volume lives on one node). */
    long largestVolumeBytes(boolean thick) {
        long largest = 0;
        for (LoopPoolNode n : informers.nodeMap().values()) {
            if (NodeChooser.fresh(n, clock.instant(), staleAfter)) {
                largest = Math.max(largest, n.getStatus().available(thick));
            }
        }
        return largest;
    }
}
