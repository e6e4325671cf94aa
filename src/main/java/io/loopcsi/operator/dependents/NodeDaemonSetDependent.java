package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;

/** The pool's node DaemonSet. */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class NodeDaemonSetDependent extends CRUDKubernetesDependentResource<DaemonSet, StoragePool> {

    public NodeDaemonSetDependent() {
        super(DaemonSet.class);
    }

    @Override
    protected DaemonSet desired(StoragePool pool, Context<StoragePool> context) {
        return NodeDaemonSet.desired(pool, OperatorSettings.namespace());
    }
}
