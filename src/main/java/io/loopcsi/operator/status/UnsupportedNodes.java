package io.loopcsi.operator.status;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * The nodes whose doctor init container (operator/desired/NodeDaemonSet) said they cannot host
 * the pool, each with doctor's verdict. Pure: the reconciler lists the pool's node pods.
 */
public final class UnsupportedNodes {

    public static final String REASON = "NodeNotSupported";
    static final String DOCTOR = "doctor";

    private UnsupportedNodes() {
    }

    /** "NODE: VERDICT" for each node pod whose doctor failed (now, or last time while it is restarted). */
    public static List<String> of(List<Pod> pods) {
        List<String> out = new ArrayList<>();
        for (Pod pod : pods) {
            if (pod.getStatus() == null || pod.getStatus().getInitContainerStatuses() == null) {
                continue;
            }
            for (ContainerStatus c : pod.getStatus().getInitContainerStatuses()) {
                if (!c.getName().equals(DOCTOR) || Boolean.TRUE.equals(c.getReady())) {
                    continue;
                }
                failed(c).ifPresent(t -> out.add(node(pod) + ": " + verdict(t.getMessage())));
            }
        }
        out.sort(null);
        return out;
    }

    private static Optional<ContainerStateTerminated> failed(ContainerStatus c) {
        ContainerStateTerminated now = c.getState() == null ? null : c.getState().getTerminated();
        ContainerStateTerminated last = c.getLastState() == null ? null : c.getLastState().getTerminated();
        for (ContainerStateTerminated t : new ContainerStateTerminated[] { now, last }) {
            if (t != null && t.getExitCode() != null && t.getExitCode() != 0) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    private static String node(Pod pod) {
        return pod.getSpec() != null && pod.getSpec().getNodeName() != null ? pod.getSpec().getNodeName() : pod.getMetadata().getName();
    }

    /** doctor's verdict line from its termination message (the tail of its output), else its last line. */
    static String verdict(String message) {
        if (message == null || message.isBlank()) {
            return "doctor failed (kubectl logs -c doctor says why)";
        }
        List<String> lines = message.strip().lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        return lines.stream().filter(l -> l.startsWith("verdict: ")).map(l -> l.substring("verdict: ".length())).findFirst()
                .orElse(lines.get(lines.size() - 1));
    }
}
