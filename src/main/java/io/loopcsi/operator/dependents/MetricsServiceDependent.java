package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.Service;

/**
 * The pool's metrics Service. Applied server-side only where that is GA: a 1.20 API server
 * answers 500 to a server-side apply that creates a Service, so there it is only created (its
 * content depends on the pool's name alone, so an existing one is already right).
 */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class MetricsServiceDependent extends CRUDKubernetesDependentResource<Service, StoragePool> {

    public MetricsServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(StoragePool pool, Context<StoragePool> context) {
        return MetricsService.desired(pool, OperatorSettings.namespace());
    }

    @Override
    public io.javaoperatorsdk.operator.processing.dependent.Matcher.Result<Service> match(Service actual, StoragePool pool,
            Context<StoragePool> context) {
        if (!useSSA(context)) {
            return io.javaoperatorsdk.operator.processing.dependent.Matcher.Result.nonComputed(true);
        }
        return super.match(actual, pool, context);
    }

    @Override
    protected boolean useSSA(Context<StoragePool> context) {
        return io.loopcsi.operator.Discovery.clusterInfo(context.getClient()).serverSideApplyGa() && super.useSSA(context);
    }
}
