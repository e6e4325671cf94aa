package io.loopcsi.operator.desired;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * A Prometheus Operator ServiceMonitor for the pool's metrics Service. Built as a generic
 * resource: the monitoring.coreos.com CRDs are optional, the operator only writes it where
 * they exist.
 */
public final class ServiceMonitorSpec {

    public static final String GROUP = "monitoring.coreos.com";
    public static final String VERSION = "v1";
    public static final String KIND = "ServiceMonitor";
    public static final String CRD = "servicemonitors." + GROUP;

    private ServiceMonitorSpec() {
    }

    public static GenericKubernetesResource desired(StoragePool pool, String namespace) {
        return new GenericKubernetesResourceBuilder()
                .withApiVersion(GROUP + "/" + VERSION).withKind(KIND)
                .withNewMetadata().withName(PoolNames.metrics(pool)).withNamespace(namespace).withLabels(PoolNames.labels(pool, "metrics"))
                .endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of(
                        "selector", Map.of("matchLabels", Map.of(PoolNames.INSTANCE, pool.getMetadata().getName(), PoolNames.COMPONENT, "metrics")),
                        "endpoints", List.of(Map.of("port", "metrics", "path", "/q/metrics", "interval", "30s")))))
                .build();
    }
}
