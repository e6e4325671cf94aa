package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.loopcsi.operator.api.Monitoring;
import io.loopcsi.operator.api.StoragePool;

class GrafanaDashboardTest {

    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void offUnlessThePoolAsks() {
        StoragePool p = Pools.minimal("p1");
        assertFalse(GrafanaDashboard.wanted(p));
        p.getSpec().setMonitoring(null);
        assertFalse(GrafanaDashboard.wanted(p));
        p.getSpec().setMonitoring(new Monitoring());
        p.getSpec().getMonitoring().setGrafanaDashboard(true);
        assertTrue(GrafanaDashboard.wanted(p));
    }

    @Test
    void theConfigMapCarriesTheCommittedDashboardForThisPool() throws Exception {
        StoragePool p = Pools.minimal("fast");
        p.getSpec().setDriverName("fast.example.org");
        ConfigMap cm = GrafanaDashboard.desired(p, "ns", GrafanaDashboard.committed());
        assertEquals("loopcsi-fast-dashboard", cm.getMetadata().getName());
        assertEquals("ns", cm.getMetadata().getNamespace());
        assertEquals("1", cm.getMetadata().getLabels().get("grafana_dashboard"));
        assertEquals(PoolNames.MANAGER, cm.getMetadata().getLabels().get(PoolNames.MANAGED_BY), "the operator's informers see it");
        assertEquals("fast", cm.getMetadata().getLabels().get(PoolNames.POOL));
        assertEquals(Set.of("loopcsi-fast.json"), cm.getData().keySet());

        JsonNode d = JSON.readTree(cm.getData().get("loopcsi-fast.json"));
        JsonNode committed = JSON.readTree(Files.readString(Path.of("src/main/resources/grafana/loopcsi-dashboard.json")));
        assertEquals(committed.get("panels"), d.get("panels"), "the committed panels, unchanged");
        assertEquals("loopcsi-fast", d.get("uid").asText());
        assertEquals("loopcsi: fast", d.get("title").asText());
        assertEquals(List.of("fast.example.org"), current(d, "driver"), "the driver variable shows this pool's driver");
        assertEquals(List.of("fast"), current(d, "pool"), "the pool variable (operator series) shows this pool");
        assertEquals(List.of("$__all"), current(d, "node"), "every node of the pool");
        assertEquals("loopcsi", GrafanaDashboard.committed().get("uid").asText(), "the committed template is left alone");
    }

    @Test
    void twoPoolsAreTwoDashboardsEvenWithLongNames() throws Exception {
        String long1 = "a-pool-with-a-name-as-long-as-grafana-allows-1";
        String long2 = "a-pool-with-a-name-as-long-as-grafana-allows-2";
        List<String> uids = List.of("one", long1, long2).stream().map(n -> GrafanaDashboard.desired(Pools.minimal(n), "ns",
                GrafanaDashboard.committed())).map(cm -> uid(cm)).toList();
        assertEquals(3, Set.copyOf(uids).size(), uids.toString());
        uids.forEach(u -> assertTrue(u.length() <= GrafanaDashboard.MAX_UID, u));
        assertNotEquals(GrafanaDashboard.uid(Pools.minimal(long1)), GrafanaDashboard.uid(Pools.minimal(long2)));
        assertEquals(GrafanaDashboard.uid(Pools.minimal(long1)), GrafanaDashboard.uid(Pools.minimal(long1)), "stable across reconciles");
    }

    static String uid(ConfigMap cm) {
        try {
            return JSON.readTree(cm.getData().values().iterator().next()).get("uid").asText();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static List<String> current(JsonNode dashboard, String variable) {
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (v.path("name").asText().equals(variable)) {
                JsonNode value = v.path("current").path("value");
                return value.isArray() ? JSON.convertValue(value, JSON.getTypeFactory().constructCollectionType(List.class, String.class))
                        : List.of(value.asText());
            }
        }
        throw new AssertionError("no variable " + variable);
    }
}
