package io.loopcsi.operator.dependents;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.BulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.loopcsi.operator.ClassUsers;
import io.loopcsi.operator.api.ManagedObject;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.StorageClasses;
import io.loopcsi.operator.status.ManagedRecord;

/**
 * The pool's StorageClasses, one per spec entry. JOSDK's bulk semantics delete every secondary
 * that is not desired, and its secondaries are whatever carries the pool's owner reference, a
 * copy made with kubectl get -o yaml included: so the secondaries here are only the pool's own
 * classes ({@link ManagedRecord}: recorded by UID, or at a wanted name). A class the spec no
 * longer names is deleted only while no claim or volume uses it ({@link ClassUsers}); the
 * reconciler reports the kept ones. A StorageClass' provisioner, parameters, reclaim policy and
 * binding mode are immutable, so a change there replaces the class under the same name at once
 * (PersistentVolumes keep their own copy of what they need; pending claims find the new class).
 */
@KubernetesDependent(informer = @Informer(labelSelector = PoolNames.MANAGED_SELECTOR))
public class StorageClassesDependent extends CRUDKubernetesDependentResource<StorageClass, StoragePool>
        implements BulkDependentResource<StorageClass, StoragePool> {

    private static final Logger LOG = Logger.getLogger(StorageClassesDependent.class);

    public StorageClassesDependent() {
        super(StorageClass.class);
    }

    @Override
    public Map<String, StorageClass> desiredResources(StoragePool pool, Context<StoragePool> context) {
        return StorageClasses.desired(pool);
    }

    @Override
    public Map<String, StorageClass> getSecondaryResources(StoragePool pool, Context<StoragePool> context) {
        List<ManagedObject> record = pool.getStatus() == null ? null : pool.getStatus().getManagedObjects();
        Set<String> wanted = StorageClasses.desired(pool).values().stream().map(ManagedRecord::key).collect(Collectors.toSet());
        return context.getSecondaryResourcesAsStream(StorageClass.class).filter(sc -> ManagedRecord.ours(record, sc, pool, wanted))
                .collect(Collectors.toMap(sc -> sc.getMetadata().getName(), sc -> sc));
    }

    @Override
    public void deleteTargetResource(StoragePool pool, StorageClass resource, String key, Context<StoragePool> context) {
        Map<String, List<String>> users = ClassUsers.of(context.getClient(), Set.of(resource.getMetadata().getName()));
        if (!users.isEmpty()) {
            LOG.infof("StoragePool %s: keeping %s, no longer in the spec but used", pool.getMetadata().getName(), ClassUsers.describe(users, 5));
            return;
        }
        super.deleteTargetResource(pool, resource, key, context);
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
