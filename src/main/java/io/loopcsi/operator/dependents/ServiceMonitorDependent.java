package io.loopcsi.operator.dependents;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.Updater;
import io.javaoperatorsdk.operator.api.reconciler.dependent.GarbageCollected;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.GenericKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.ServiceMonitorSpec;

/** The pool's ServiceMonitor; active only where the Prometheus Operator CRDs exist ({@link ServiceMonitorCrdPresent}). */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class ServiceMonitorDependent extends GenericKubernetesDependentResource<StoragePool>
        implements Creator<GenericKubernetesResource, StoragePool>, Updater<GenericKubernetesResource, StoragePool>,
        GarbageCollected<StoragePool> {

    public ServiceMonitorDependent() {
        super(new GroupVersionKind(ServiceMonitorSpec.GROUP, ServiceMonitorSpec.VERSION, ServiceMonitorSpec.KIND));
    }

    @Override
    protected GenericKubernetesResource desired(StoragePool pool, Context<StoragePool> context) {
        return ServiceMonitorSpec.desired(pool, OperatorSettings.namespace());
    }
}
