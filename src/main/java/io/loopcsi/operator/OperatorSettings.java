package io.loopcsi.operator;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/**
 * Where the operator puts the namespaced objects of every pool (its own namespace). Read from
 * the system property loopcsi.operator.namespace, else the environment (LOOPCSI_NAMESPACE, set
 * from the pod's namespace in kubernetes/), else loopcsi-system. Plain lookups, no CDI: JOSDK
 * instantiates the dependents itself.
 *
 * <p>Two timings, system properties only (tests on a real API server shorten them to prove the same
 * behaviour in seconds; a deployment keeps the defaults): {@value #RECHECK_PROPERTY}, how often a pool
 * is reconciled when nothing the operator watches changed (what it does not watch: LoopPoolNode
 * heartbeats, Node objects, PVs, CRDs that appear), and {@value #NODE_REPORT_FRESH_PROPERTY}, how
 * long a node's LoopPoolNode heartbeat counts (three of the node role's default 20 s heartbeats, so a
 * node missing two is not yet lost). Values like {@code 3s} or {@code 2m}.
 */
public final class OperatorSettings {

    public static final String NAMESPACE_PROPERTY = "loopcsi.operator.namespace";
    public static final String DEFAULT_NAMESPACE = "loopcsi-system";
    public static final String RECHECK_PROPERTY = "loopcsi.operator.recheck";
    public static final Duration DEFAULT_RECHECK = Duration.ofSeconds(30);
    public static final String NODE_REPORT_FRESH_PROPERTY = "loopcsi.operator.node-report-fresh";
    public static final Duration DEFAULT_NODE_REPORT_FRESH = Duration.ofSeconds(60);

    private OperatorSettings() {
    }

    public static String namespace() {
        String ns = System.getProperty(NAMESPACE_PROPERTY);
        if (ns == null || ns.isBlank()) {
            ns = System.getenv("LOOPCSI_NAMESPACE");
        }
        return ns == null || ns.isBlank() ? DEFAULT_NAMESPACE : ns;
    }

    /** How often a pool is reconciled again when nothing it watches changed. */
    public static Duration recheck() {
        return duration(RECHECK_PROPERTY, DEFAULT_RECHECK);
    }

    /** A node's LoopPoolNode heartbeat older than this is stale: the node does not serve the pool. */
    public static Duration nodeReportFresh() {
        return duration(NODE_REPORT_FRESH_PROPERTY, DEFAULT_NODE_REPORT_FRESH);
    }

    static Duration duration(String property, Duration unset) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            return unset;
        }
        try {
            Duration d = Duration.parse("PT" + v.strip().toUpperCase(Locale.ROOT));
            if (!d.isNegative() && !d.isZero()) {
                return d;
            }
        } catch (DateTimeParseException e) {
            // said below
        }
        throw new IllegalArgumentException(property + "=" + v + ": not a positive duration such as 3s or 2m");
    }
}
