package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.Service;

/** The pool's metrics Service. */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class MetricsServiceDependent extends CRUDKubernetesDependentResource<Service, StoragePool> {

    public MetricsServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(StoragePool pool, Context<StoragePool> context) {
        return MetricsService.desired(pool, OperatorSettings.namespace());
    }
}
