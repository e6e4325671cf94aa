package io.loopcsi.operator.dependents;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.Discovery;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.VolumeApiDiscovery;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.*;
import io.fabric8.kubernetes.api.model.apps.Deployment;

/** The pool's controller Deployment. */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class ControllerDeploymentDependent extends CRUDKubernetesDependentResource<Deployment, StoragePool> {

    public ControllerDeploymentDependent() {
        super(Deployment.class);
    }

    @Override
    protected Deployment desired(StoragePool pool, Context<StoragePool> context) {
        return ControllerDeployment.desired(pool, OperatorSettings.namespace(), Discovery.clusterInfo(context.getClient()),
                VolumeApiDiscovery.volumeApis(context.getClient()));
    }
}
