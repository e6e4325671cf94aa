package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;

/** The pool's CSIDriver (cluster-scoped, owned by the pool). */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class CsiDriverDependent extends CRUDKubernetesDependentResource<CSIDriver, StoragePool> {

    public CsiDriverDependent() {
        super(CSIDriver.class);
    }

    @Override
    protected CSIDriver desired(StoragePool pool, Context<StoragePool> context) {
        return CsiDriverSpec.desired(pool, io.loopcsi.operator.Discovery.clusterInfo(context.getClient()));
    }
}
