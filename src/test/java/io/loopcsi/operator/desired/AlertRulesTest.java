package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The alerting rules the operator writes (PrometheusRuleSpec), checked by Prometheus' own
 * promtool (Debian's prometheus package): the rule file is valid, and the unit tests in
 * src/test/resources/alerts make every alert fire where it should and stay silent elsewhere.
 */
class AlertRulesTest {

    static final Path PROMTOOL = Path.of("/usr/bin/promtool");
    static final Path DIR = Path.of("target/alert-rules");
    static List<Map<String, Object>> groups;

    @BeforeAll
    static void writeRuleFile() throws IOException {
        groups = PrometheusRuleSpec.groups(Pools.minimal("local"));
        Files.createDirectories(DIR);
        // JSON is YAML: promtool reads it as a rule file
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(DIR.resolve("rules.json").toFile(), Map.of("groups", groups));
        try (InputStream in = AlertRulesTest.class.getResourceAsStream("/alerts/loopcsi-alerts-test.yaml")) {
            Files.write(DIR.resolve("loopcsi-alerts-test.yaml"), in.readAllBytes());
        }
    }

    @Test
    void promtoolAcceptsTheRuleFile() throws Exception {
        String out = promtool("check", "rules", "rules.json");
        assertTrue(out.contains("SUCCESS: " + alerts().size() + " rules found"), out);
    }

    @Test
    void everyAlertFiresWhenItShouldAndOnlyThen() throws Exception {
        promtool("test", "rules", "loopcsi-alerts-test.yaml");
        String tests = Files.readString(DIR.resolve("loopcsi-alerts-test.yaml"));
        for (Map<String, Object> alert : alerts()) {
            String name = (String) alert.get("alert");
            // each alert has a case where it is silent (exp_alerts: []) and one where it fires
            assertTrue(tests.contains("alertname: " + name + "\n        exp_alerts: []"), name + " has no silent case");
            assertTrue(tests.contains("alertname: " + name + "\n        exp_alerts:\n"), name + " has no firing case");
            @SuppressWarnings("unchecked")
            Map<String, String> annotations = (Map<String, String>) alert.get("annotations");
            assertEquals(List.of("description", "runbook_url", "summary"), annotations.keySet().stream().sorted().toList(), name);
        }
    }

    @Test
    void everyAlertHasARunbookSection() throws IOException {
        String doc = Files.readString(Path.of("docs/metrics.md"));
        for (Map<String, Object> alert : alerts()) {
            assertTrue(doc.contains("\n### " + alert.get("alert") + "\n"), "docs/metrics.md has no runbook section for " + alert.get("alert"));
        }
    }

    @Test
    void thePrometheusRuleCarriesTheGroups() {
        var rule = PrometheusRuleSpec.desired(Pools.minimal("local"), "ns");
        assertEquals("monitoring.coreos.com/v1", rule.getApiVersion());
        assertEquals("PrometheusRule", rule.getKind());
        assertEquals("loopcsi-local-metrics", rule.getMetadata().getName());
        assertEquals("ns", rule.getMetadata().getNamespace());
        assertEquals(Map.of("groups", groups), rule.getAdditionalProperties().get("spec"));
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> alerts() {
        return (List<Map<String, Object>>) groups.get(0).get("rules");
    }

    /** Runs promtool in DIR; its output, or an AssertionError with it when it fails. */
    static String promtool(String... args) throws Exception {
        if (!Files.isExecutable(PROMTOOL)) {
            throw new IllegalStateException(PROMTOOL + " is missing: install Debian's prometheus package (bash src/main/sh/host-packages.sh --test)");
        }
        List<String> cmd = new java.util.ArrayList<>(List.of(PROMTOOL.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(DIR.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool did not finish");
        assertEquals(0, p.exitValue(), "promtool " + String.join(" ", args) + ":\n" + out);
        return out;
    }
}
