package io.loopcsi.operator.dependents;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.GrafanaDashboard;
import io.loopcsi.operator.desired.PoolNames;

/**
 * The pool's Grafana dashboard ConfigMap, while {@code spec.monitoring.grafanaDashboard} is true
 * ({@link Wanted}, its reconcile precondition: when that does not hold, the workflow deletes the
 * ConfigMap). Owned by the pool, so it also goes with the pool.
 */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class GrafanaDashboardDependent extends CRUDKubernetesDependentResource<ConfigMap, StoragePool> {

    public GrafanaDashboardDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(StoragePool pool, Context<StoragePool> context) {
        return GrafanaDashboard.desired(pool, OperatorSettings.namespace(), GrafanaDashboard.committed());
    }

    /** The pool asks for its dashboard. */
    public static class Wanted implements Condition<ConfigMap, StoragePool> {

        @Override
        public boolean isMet(DependentResource<ConfigMap, StoragePool> dependent, StoragePool pool, Context<StoragePool> context) {
            return GrafanaDashboard.wanted(pool);
        }
    }
}
