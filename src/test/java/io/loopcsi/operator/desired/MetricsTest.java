package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class MetricsTest {

    @Test
    void serviceSelectsAllPoolPodsOnTheMetricsPort() {
        var s = MetricsService.desired(Pools.minimal("p1"), "ns");
        assertEquals("loopcsi-p1-metrics", s.getMetadata().getName());
        assertEquals(Map.of(PoolNames.INSTANCE, "p1", PoolNames.NAME, "loopcsi"), s.getSpec().getSelector());
        assertEquals("metrics", s.getSpec().getPorts().get(0).getTargetPort().getStrVal());
    }

    @Test
    @SuppressWarnings("unchecked")
    void serviceMonitorScrapesTheService() {
        var m = ServiceMonitorSpec.desired(Pools.minimal("p1"), "ns");
        assertEquals("monitoring.coreos.com/v1", m.getApiVersion());
        assertEquals("ServiceMonitor", m.getKind());
        var spec = (Map<String, Object>) m.getAdditionalProperties().get("spec");
        var endpoints = (List<Map<String, Object>>) spec.get("endpoints");
        assertEquals("metrics", endpoints.get(0).get("port"));
        var sel = (Map<String, Object>) ((Map<String, Object>) spec.get("selector")).get("matchLabels");
        // the Service carries these labels
        var svc = MetricsService.desired(Pools.minimal("p1"), "ns");
        sel.forEach((k, v) -> assertEquals(v, svc.getMetadata().getLabels().get(k)));
    }
}
