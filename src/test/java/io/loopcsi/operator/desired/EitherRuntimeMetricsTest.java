package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The dashboard and the alert rules work with either runtime: the native executable exports no
 * jvm_buffer_* and none of the garbage collector's series below (measured on the native-check --link
 * executable's /q/metrics, issue 33), so no panel or alert may need one. Series both runtimes have
 * (process_*, loopcsi_*, operator_sdk_*) are fine.
 */
class EitherRuntimeMetricsTest {

    /** What the JVM's /q/metrics has and the native executable's lacks (prefixes). */
    static final List<String> NATIVE_LACKS = List.of("jvm_buffer_", "jvm_gc_live_data_size_bytes", "jvm_gc_max_data_size_bytes",
            "jvm_gc_memory_allocated", "jvm_gc_memory_promoted", "jvm_memory_usage_after_gc");

    @Test
    void noPanelNeedsASeriesTheNativeExecutableLacks() {
        List<String> queries = new ArrayList<>();
        strings(GrafanaDashboard.committed(), queries);
        assertTrue(queries.stream().anyMatch(q -> q.contains("loopcsi_pool_capacity_bytes")), "the dashboard's queries were read");
        for (String q : queries) {
            for (String lacking : NATIVE_LACKS) {
                assertFalse(q.contains(lacking), "a dashboard query needs " + lacking + ", which the native executable lacks: " + q);
            }
        }
    }

    @Test
    void noAlertNeedsASeriesTheNativeExecutableLacks() {
        List<Map<String, Object>> groups = PrometheusRuleSpec.groups(Pools.minimal("p"));
        int rules = 0;
        for (Map<String, Object> g : groups) {
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> rs = (List<Map<String, Object>>) g.get("rules");
            for (Map<String, Object> r : rs) {
                rules++;
                String expr = String.valueOf(r.get("expr"));
                for (String lacking : NATIVE_LACKS) {
                    assertFalse(expr.contains(lacking), r.get("alert") + " needs " + lacking + ", which the native executable lacks: " + expr);
                }
            }
        }
        assertTrue(rules > 0, "the rules were read");
    }

    private static void strings(JsonNode n, List<String> out) {
        if (n.isTextual()) {
            out.add(n.asText());
        }
        n.forEach(child -> strings(child, out));
    }
}
