package io.loopcsi.operator.dependents;

import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.BulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.StorageClasses;

/**
 * The pool's StorageClasses, one per spec entry. Those the pool owns and the spec no longer
 * names are deleted (JOSDK's bulk semantics: secondaries are the classes owned by the pool).
 * A StorageClass' provisioner, parameters, reclaim policy and binding mode are immutable, so a
 * change there replaces the class (PersistentVolumes keep their own copy of what they need).
 */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class StorageClassesDependent extends CRUDKubernetesDependentResource<StorageClass, StoragePool>
        implements BulkDependentResource<StorageClass, StoragePool> {

    public StorageClassesDependent() {
        super(StorageClass.class);
    }

    @Override
    public Map<String, StorageClass> desiredResources(StoragePool pool, Context<StoragePool> context) {
        return StorageClasses.desired(pool);
    }

    @Override
    public Map<String, StorageClass> getSecondaryResources(StoragePool pool, Context<StoragePool> context) {
        return context.getSecondaryResourcesAsStream(StorageClass.class)
                .collect(Collectors.toMap(sc -> sc.getMetadata().getName(), sc -> sc));
    }

    @Override
    public StorageClass update(StorageClass actual, StorageClass desired, StoragePool pool, Context<StoragePool> context) {
        if (immutablePartDiffers(actual, desired)) {
            context.getClient().resource(actual).withGracePeriod(0).delete();
            return create(desired, pool, context);
        }
        return super.update(actual, desired, pool, context);
    }

    static boolean immutablePartDiffers(StorageClass actual, StorageClass desired) {
        return !Objects.equals(actual.getProvisioner(), desired.getProvisioner())
                || !Objects.equals(actual.getParameters(), desired.getParameters())
                || !Objects.equals(actual.getReclaimPolicy(), desired.getReclaimPolicy())
                || !Objects.equals(actual.getVolumeBindingMode(), desired.getVolumeBindingMode());
    }
}
