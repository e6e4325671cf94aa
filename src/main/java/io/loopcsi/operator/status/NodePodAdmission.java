package io.loopcsi.operator.status;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;

/**
 * Why the node DaemonSet has fewer pods than nodes when the API server refuses to admit them (Pod
 * Security, a ResourceQuota, a policy webhook): the DaemonSet controller says so only in
 * {@code FailedCreate} Events on the DaemonSet, which a user looking at the pool would never see.
 * Pure: the reconciler lists the Events and reads the namespace.
 */
public final class NodePodAdmission {

    public static final String REASON = "NodePodsRefused";
    /** The label Pod Security admission enforces a namespace's level by. */
    public static final String ENFORCE_LABEL = "pod-security.kubernetes.io/enforce";
    /** The level the node pods need: privileged containers, hostPath, Bidirectional mount propagation. */
    public static final String NEEDED_LEVEL = "privileged";

    private NodePodAdmission() {
    }

    /**
     * The DaemonSet controller retries a refused create with its work queue's backoff, at most
     * 1000 s apart (client-go's default controller rate limiter): a FailedCreate older than this
     * is a refusal that stopped (the node left, the DaemonSet went), not one still going on.
     */
    public static final Duration CURRENT = Duration.ofMinutes(20);

    /**
     * The refusal to report: when the DaemonSet lacks pods and its latest FailedCreate Event is
     * current and newer than its latest SuccessfulCreate, that Event's message, and what to change
     * where Pod Security is the cause. Empty otherwise.
     *
     * <p>The DaemonSet's status cannot say how many pods are missing: the controller of 1.20 (and
     * later) returns at the first failed create without writing its status, so a DaemonSet whose
     * every pod is refused still shows 0 desired. Only "every desired pod is there" is trusted.
     *
     * @param events the Events whose involved object is the DaemonSet
     * @param namespace the namespace the node pods go to (null when it cannot be read)
     */
    public static Optional<String> refusal(DaemonSet nodes, List<Event> events, Namespace namespace, Instant now) {
        if (nodes == null) {
            return Optional.empty();
        }
        int desired = nodes.getStatus() == null || nodes.getStatus().getDesiredNumberScheduled() == null ? 0
                : nodes.getStatus().getDesiredNumberScheduled();
        int scheduled = nodes.getStatus() == null || nodes.getStatus().getCurrentNumberScheduled() == null ? 0
                : nodes.getStatus().getCurrentNumberScheduled();
        if (desired > 0 && scheduled >= desired) {
            return Optional.empty();
        }
        Optional<Event> failed = latest(events, "FailedCreate");
        Optional<Event> created = latest(events, "SuccessfulCreate");
        if (failed.isEmpty() || when(failed.get()).isBefore(now.minus(CURRENT))
                || created.isPresent() && !when(created.get()).isBefore(when(failed.get()))) {
            return Optional.empty();
        }
        String message = failed.get().getMessage() == null ? "" : failed.get().getMessage().strip();
        if (message.startsWith("(combined from similar events): ")) {
            message = message.substring("(combined from similar events): ".length());
        }
        if (message.startsWith("Error creating: ")) {
            message = message.substring("Error creating: ".length());
        }
        String ns = nodes.getMetadata().getNamespace();
        StringBuilder out = new StringBuilder("node pods of DaemonSet " + ns + "/" + nodes.getMetadata().getName() + " refused admission ("
                + (desired > scheduled ? (desired - scheduled) + " of " + desired + " missing" : scheduled + " created") + "): " + message);
        String level = level(namespace);
        if (level != null && !level.equals(NEEDED_LEVEL)) {
            out.append("; namespace ").append(ns).append(" enforces Pod Security level '").append(level)
                    .append("' and the node pods need '" + NEEDED_LEVEL + "': ").append(fix(ns));
        } else if (level == null && message.contains("PodSecurity")) {
            out.append("; namespace ").append(ns).append(" has no " + ENFORCE_LABEL + " label, so the cluster's default level applies"
                    + " and the node pods need '" + NEEDED_LEVEL + "': ").append(fix(ns));
        }
        return Optional.of(out.toString());
    }

    static String fix(String ns) {
        return "kubectl label namespace " + ns + " " + ENFORCE_LABEL + "=" + NEEDED_LEVEL + " --overwrite";
    }

    private static String level(Namespace namespace) {
        if (namespace == null || namespace.getMetadata() == null) {
            return null;
        }
        Map<String, String> labels = namespace.getMetadata().getLabels();
        return labels == null ? null : labels.get(ENFORCE_LABEL);
    }

    private static Optional<Event> latest(List<Event> events, String reason) {
        return events == null ? Optional.empty()
                : events.stream().filter(e -> reason.equals(e.getReason())).max(Comparator.comparing(NodePodAdmission::when));
    }

    /** When an Event last happened: its lastTimestamp, else eventTime (events.k8s.io writers), else when it was made. */
    static Instant when(Event e) {
        return Stream.of(e.getLastTimestamp(), e.getEventTime() == null ? null : e.getEventTime().getTime(), e.getFirstTimestamp(),
                e.getMetadata() == null ? null : e.getMetadata().getCreationTimestamp())
                .filter(t -> t != null && !t.isBlank()).findFirst().map(NodePodAdmission::parse).orElse(Instant.EPOCH);
    }

    private static Instant parse(String t) {
        try {
            return java.time.OffsetDateTime.parse(t).toInstant();
        } catch (RuntimeException e) {
            return Instant.EPOCH;
        }
    }
}
