package io.loopcsi.metrics;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The PromQL of the committed Grafana dashboard: every panel query and every variable's query,
 * each marked as reading the operator's series (it filters by the {@code $pool} variable, or is
 * that variable's query) or the driver's (the rest: by {@code $driver}, {@code $node}).
 */
public final class DashboardQueries {

    /** The committed dashboard (also on the class path, for the operator). */
    public static final Path DASHBOARD = Path.of("src/main/resources/grafana/loopcsi-dashboard.json");
    private static final Pattern METRIC = Pattern.compile("\\b(loopcsi_[a-z_]+|operator_sdk_[a-z_]+)\\b");
    private static final Pattern POOL_MATCHER = Pattern.compile("\\b(loopcsi_[a-z_]+|operator_sdk_[a-z_]+)\\{[^}]*?\\b(\\w+)=~\"\\$pool\"");
    private static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.*), *(\\w+)\\)$");

    /**
     * @param promql the query as the dashboard has it (with $variables)
     * @param operator whether it reads the operator's series
     * @param poolLabels for an operator query: each metric's label that selects the pool
     */
    public record Query(String promql, boolean operator, Map<String, String> poolLabels) {

        /** The metric names the query reads. */
        public Set<String> metrics() {
            Set<String> names = new LinkedHashSet<>();
            Matcher m = METRIC.matcher(promql);
            while (m.find()) {
                names.add(m.group(1));
            }
            return names;
        }

        /** The query as Prometheus can run it: variables made match-anything, Grafana's rate interval 1m. */
        public String concrete() {
            return promql.replace("$__rate_interval", "1m").replaceAll("\\$(driver|node|pool)", ".*");
        }
    }

    private DashboardQueries() {
    }

    public static List<Query> all() throws IOException {
        JsonNode dash = new ObjectMapper().readTree(DASHBOARD.toFile());
        List<Query> out = new ArrayList<>();
        dash.findValues("expr").forEach(n -> out.add(panelQuery(n.asText())));
        for (JsonNode v : dash.path("templating").path("list")) {
            Matcher m = LABEL_VALUES.matcher(v.path("query").path("query").asText(""));
            if (m.matches()) {
                boolean pool = v.path("name").asText().equals("pool");
                Map<String, String> labels = new LinkedHashMap<>();
                if (pool) {
                    labels.put(m.group(1).replaceAll("\\{.*", ""), m.group(2));
                }
                out.add(new Query(m.group(1), pool, labels));
            }
        }
        return out;
    }

    private static Query panelQuery(String promql) {
        Map<String, String> labels = new LinkedHashMap<>();
        Matcher m = POOL_MATCHER.matcher(promql);
        while (m.find()) {
            labels.put(m.group(1), m.group(2));
        }
        return new Query(promql, promql.contains("$pool"), labels);
    }
}
