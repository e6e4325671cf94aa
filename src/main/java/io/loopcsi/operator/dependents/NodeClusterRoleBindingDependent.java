package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;

/** Binds the node ClusterRole to the node ServiceAccount. */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class NodeClusterRoleBindingDependent extends CRUDKubernetesDependentResource<ClusterRoleBinding, StoragePool> {

    public NodeClusterRoleBindingDependent() {
        super(ClusterRoleBinding.class);
    }

    @Override
    protected ClusterRoleBinding desired(StoragePool pool, Context<StoragePool> context) {
        return CsiRbac.clusterRoleBinding(pool, OperatorSettings.namespace(), CsiRbac.NODE);
    }
}
