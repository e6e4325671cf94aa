package io.loopcsi.operator.status;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;

/**
 * Kubernetes-style conditions: setting a condition keeps its lastTransitionTime unless its
 * status changes. Pure functions over lists (the status object owns the list).
 */
public final class Conditions {

    public static final String READY = "Ready";
    public static final String PROGRESSING = "Progressing";
    public static final String DEGRADED = "Degraded";

    private Conditions() {
    }

    /** A copy of {@code current} with {@code type} set; lastTransitionTime moves only when status changes. */
    public static List<Condition> set(List<Condition> current, String type, boolean status, String reason, String message,
            Long generation, Instant now) {
        List<Condition> out = new ArrayList<>();
        String s = status ? "True" : "False";
        Optional<Condition> old = find(current, type);
        String since = old.filter(c -> s.equals(c.getStatus())).map(Condition::getLastTransitionTime).orElse(now.toString());
        boolean placed = false;
        Condition updated = new ConditionBuilder().withType(type).withStatus(s).withReason(reason).withMessage(message)
                .withObservedGeneration(generation).withLastTransitionTime(since).build();
        for (Condition c : current == null ? List.<Condition>of() : current) {
            if (Objects.equals(c.getType(), type)) {
                out.add(updated);
                placed = true;
            } else {
                out.add(c);
            }
        }
        if (!placed) {
            out.add(updated);
        }
        return out;
    }

    public static Optional<Condition> find(List<Condition> conditions, String type) {
        return conditions == null ? Optional.empty() : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    public static boolean isTrue(List<Condition> conditions, String type) {
        return find(conditions, type).map(c -> "True".equals(c.getStatus())).orElse(false);
    }
}
