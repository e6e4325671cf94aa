package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;

/** Binds the controller Role to the controller ServiceAccount. */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class ControllerRoleBindingDependent extends CRUDKubernetesDependentResource<RoleBinding, StoragePool> {

    public ControllerRoleBindingDependent() {
        super(RoleBinding.class);
    }

    @Override
    protected RoleBinding desired(StoragePool pool, Context<StoragePool> context) {
        return CsiRbac.controllerRoleBinding(pool, OperatorSettings.namespace());
    }
}
