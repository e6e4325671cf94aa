package io.loopcsi.operator.status;

import java.util.ArrayList;
import java.util.List;

import io.loopcsi.handoff.LoopPoolNode;

/**
 * The nodes that report a capacity configuration they cannot serve from (LoopPoolNode
 * {@code capacityProblem}, engine.CapacityPolicy#problem: a hostReserve not smaller than the
 * host filesystem). Pure. The pool turns Degraded with {@link #REASON}, and a Warning Event says so.
 */
public final class HostReserve {

    public static final String REASON = "HostReserveTooLarge";

    private HostReserve() {
    }

    /** "NODE: PROBLEM" for each node whose last report names one, sorted. */
    public static List<String> problems(List<LoopPoolNode> reports) {
        List<String> out = new ArrayList<>();
        for (LoopPoolNode r : reports) {
            if (r.getSpec() == null || r.getStatus() == null) {
                continue;
            }
            String p = r.getStatus().getCapacityProblem();
            if (p != null && !p.isBlank()) {
                out.add(r.getSpec().getNode() + ": " + p);
            }
        }
        out.sort(null);
        return out;
    }

    public static String message(List<String> problems) {
        return "spec.hostReserve leaves nothing to offer on " + problems.size() + " node(s): " + String.join("; ", problems)
                + " (lower hostReserve, or move backingDir to a larger filesystem)";
    }
}
