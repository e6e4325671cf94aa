package io.loopcsi.operator.desired;

import java.util.Map;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.loopcsi.operator.api.StoragePool;

/** A headless Service over all of the pool's pods (controller and node) on their metrics port, for scraping. */
public final class MetricsService {

    private MetricsService() {
    }

    public static Service desired(StoragePool pool, String namespace) {
        return new ServiceBuilder()
                .withNewMetadata().withName(PoolNames.metrics(pool)).withNamespace(namespace).withLabels(PoolNames.labels(pool, "metrics"))
                .endMetadata()
                .withNewSpec()
                .withClusterIP("None")
                .withSelector(Map.of(PoolNames.INSTANCE, pool.getMetadata().getName(), PoolNames.NAME, "loopcsi"))
                .addNewPort().withName("metrics").withPort(Sidecars.METRICS_PORT).withTargetPort(new IntOrString("metrics")).withProtocol("TCP")
                .endPort()
                .endSpec()
                .build();
    }
}
