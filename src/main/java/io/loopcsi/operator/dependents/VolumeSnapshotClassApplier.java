package io.loopcsi.operator.dependents;

import java.util.List;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.loopcsi.operator.SnapshotApiDiscovery;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.VolumeSnapshotClassSpec;
import io.loopcsi.operator.status.ManagedRecord;
import io.loopcsi.operator.status.OwnershipCheck;

/**
 * The pool's VolumeSnapshotClass (cluster-scoped), written only where snapshot.storage.k8s.io is
 * served, in the version served ({@link SnapshotApiDiscovery}). Not a JOSDK dependent for the reason
 * {@link CrdGatedApplier} gives (a kind the server may not serve), and not a CrdGatedApplier since
 * its version is chosen per server. It applies server-side with an owner reference, so Kubernetes
 * deletes it with the pool; a class the pool made under another name (spec.snapshots.className
 * changed: its UID is in the pool's record, {@link ManagedRecord}) is deleted, never a class that
 * only carries the pool's marks (a user's copy). The reconciler checks {@link #foreign} first: a class of that name the pool
 * does not own is never applied over (a forced apply would take it over).
 */
public class VolumeSnapshotClassApplier {

    /** "VolumeSnapshotClass NAME" when a class of the pool's name exists without the pool as owner. */
    public Optional<String> foreign(StoragePool pool, KubernetesClient client) {
        Optional<String> version = SnapshotApiDiscovery.servedVersion(client);
        if (version.isEmpty()) {
            return Optional.empty();
        }
        String name = VolumeSnapshotClassSpec.name(pool);
        GenericKubernetesResource actual = classes(client, version.get()).withName(name).get();
        return actual != null && !OwnershipCheck.ownedBy(actual, pool) ? Optional.of(VolumeSnapshotClassSpec.KIND + " " + name) : Optional.empty();
    }

    /** Applies the pool's class where the API is served; returns it, or empty when it is not served. */
    public Optional<GenericKubernetesResource> reconcile(StoragePool pool, KubernetesClient client) {
        Optional<String> version = SnapshotApiDiscovery.servedVersion(client);
        if (version.isEmpty()) {
            return Optional.empty();
        }
        GenericKubernetesResource d = VolumeSnapshotClassSpec.desired(pool, version.get());
        d.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion(pool.getApiVersion())
                .withKind(pool.getKind()).withName(pool.getMetadata().getName()).withUid(pool.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(false).build()));
        try {
            var classes = classes(client, version.get());
            GenericKubernetesResource applied = classes.withName(d.getMetadata().getName())
                    .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(PoolNames.MANAGER)
                            .withForce(true).build(), d);
            for (GenericKubernetesResource old : classes.withLabel(PoolNames.POOL, pool.getMetadata().getName()).list().getItems()) {
                if (!old.getMetadata().getName().equals(d.getMetadata().getName())
                        && ManagedRecord.recorded(pool.getStatus() == null ? null : pool.getStatus().getManagedObjects(), old)) {
                    classes.withName(old.getMetadata().getName()).delete();
                }
            }
            return Optional.of(applied);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                SnapshotApiDiscovery.forget(client); // the CRDs went away: nothing to write any more
                return Optional.empty();
            }
            throw e;
        }
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> classes(
            KubernetesClient client, String version) {
        return client.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup(VolumeSnapshotClassSpec.GROUP)
                .withVersion(version).withKind(VolumeSnapshotClassSpec.KIND).withPlural(VolumeSnapshotClassSpec.PLURAL)
                .withNamespaced(false).build());
    }
}
