package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;

/** Cluster-wide rules of the node plugin (with the privileged SCC's use on OpenShift). */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class NodeClusterRoleDependent extends CRUDKubernetesDependentResource<ClusterRole, StoragePool> {

    public NodeClusterRoleDependent() {
        super(ClusterRole.class);
    }

    @Override
    protected ClusterRole desired(StoragePool pool, Context<StoragePool> context) {
        return CsiRbac.clusterRole(pool, CsiRbac.NODE, io.loopcsi.operator.Discovery.clusterInfo(context.getClient()));
    }
}
