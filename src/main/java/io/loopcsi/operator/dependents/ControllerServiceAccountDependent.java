package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.ServiceAccount;

/** The controller Deployment's ServiceAccount. */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class ControllerServiceAccountDependent extends CRUDKubernetesDependentResource<ServiceAccount, StoragePool> {

    public ControllerServiceAccountDependent() {
        super(ServiceAccount.class);
    }

    @Override
    protected ServiceAccount desired(StoragePool pool, Context<StoragePool> context) {
        return CsiRbac.serviceAccount(pool, OperatorSettings.namespace(), CsiRbac.CONTROLLER);
    }
}
