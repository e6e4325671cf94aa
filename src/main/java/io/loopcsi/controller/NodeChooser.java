package io.loopcsi.controller;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.grpc.Status;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.Sizes;
import io.loopcsi.handoff.LoopPoolNode;

/**
 * Chooses the node of a new volume from the accessibility requirements and the nodes' published
 * capacity. Pure (the caller passes the LoopPoolNodes it has and the time). Preferred nodes come
 * first, in order (csi-provisioner puts the scheduler's selected node first), then the other
 * allowed nodes with the most room first. A node without a fresh heartbeat is not serving.
 */
final class NodeChooser {

    private NodeChooser() {
    }

    /**
     * A node, or a StatusRuntimeException: RESOURCE_EXHAUSTED when no node has room, UNAVAILABLE when the only hope is a silent node.
     * Room is the node's figure for the volume's provisioning: a thick volume needs its whole size under the cap (issue 24).
     */
    static String choose(Placement placement, long bytes, boolean thick, Map<String, LoopPoolNode> nodes, Instant now, Duration staleAfter) {
        Set<String> candidates = new LinkedHashSet<>();
        boolean anywhere = placement.requisite().isEmpty() || placement.requisite().contains(null);
        for (String p : placement.preferred()) {
            if (p != null && placement.allows(p)) {
                candidates.add(p);
            }
        }
        List<String> rest = new ArrayList<>();
        if (anywhere) {
            rest.addAll(nodes.keySet());
        } else {
            placement.requisite().forEach(rest::add);
        }
        rest.sort(Comparator.comparingLong((String n) -> -available(nodes.get(n), thick, now, staleAfter)).thenComparing(n -> n));
        candidates.addAll(rest);
        if (candidates.isEmpty()) {
            throw Status.UNAVAILABLE.withDescription("no node of this pool has reported its capacity yet (no LoopPoolNode): "
                    + "are the pool's node pods running?").asRuntimeException();
        }
        List<String> why = new ArrayList<>();
        boolean silent = false;
        for (String c : candidates) {
            LoopPoolNode n = nodes.get(c);
            if (n == null || n.getStatus() == null) {
                why.add(c + ": has not reported (is the pool's node pod running there?)");
                silent = true;
            } else if (!fresh(n, now, staleAfter)) {
                why.add(c + ": last reported at " + n.getStatus().getHeartbeatTime());
                silent = true;
            } else if (n.getStatus().available(thick) < bytes) {
                why.add(c + ": " + Sizes.format(n.getStatus().available(thick)) + " available" + (thick ? " for thick volumes" : "")
                        + (blank(n.getStatus().getCapacityProblem()) ? "" : " (" + n.getStatus().getCapacityProblem() + ")"));
            } else {
                return c;
            }
        }
        String message = "no node can take " + Sizes.format(bytes) + " now: " + String.join("; ", why);
        throw (silent ? Status.UNAVAILABLE : Status.RESOURCE_EXHAUSTED).withDescription(message).asRuntimeException();
    }

    static boolean fresh(LoopPoolNode n, Instant now, Duration staleAfter) {
        if (n == null || n.getStatus() == null || n.getStatus().getHeartbeatTime() == null) {
            return false;
        }
        try {
            return Instant.parse(n.getStatus().getHeartbeatTime()).plus(staleAfter).isAfter(now);
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static long available(LoopPoolNode n, boolean thick, Instant now, Duration staleAfter) {
        return fresh(n, now, staleAfter) ? n.getStatus().available(thick) : -1;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
