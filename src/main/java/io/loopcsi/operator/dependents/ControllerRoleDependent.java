package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.rbac.Role;

/** The controller's rules in the operator namespace (leases, CSIStorageCapacity, owner chain). */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class ControllerRoleDependent extends CRUDKubernetesDependentResource<Role, StoragePool> {

    public ControllerRoleDependent() {
        super(Role.class);
    }

    @Override
    protected Role desired(StoragePool pool, Context<StoragePool> context) {
        return CsiRbac.controllerRole(pool, OperatorSettings.namespace());
    }
}
