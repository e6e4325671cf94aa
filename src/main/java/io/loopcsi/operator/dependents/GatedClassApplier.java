package io.loopcsi.operator.dependents;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.loopcsi.operator.ClassApiDiscovery;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.status.ManagedRecord;
import io.loopcsi.operator.status.OwnershipCheck;

/**
 * A pool's cluster-scoped classes of one kind that exists only where its API is served, written in the
 * newest version served ({@link ClassApiDiscovery}); where it is not served nothing is written and
 * nothing fails. Not a JOSDK dependent for the reason {@link CrdGatedApplier} gives. As
 * {@link VolumeSnapshotClassApplier}: applied server-side with the pool's owner reference (Kubernetes
 * deletes them with the pool); a class of the kind that the pool recorded ({@link ManagedRecord}) but no
 * longer wants is deleted, never one that only carries the pool's marks. A class at a wanted name that the
 * pool does not own is never applied over: it is skipped, and the reconciler reports {@link #foreign} in
 * the ClassesSkipped condition without stopping the pool. Unlike the other kinds, which stop it with
 * NameConflict: these kinds arrived in an upgrade, after users had written such classes by hand (the
 * README told them to), and one of them at the pool's name must not stop the pool's workloads.
 */
abstract class GatedClassApplier {

    private final ClassApiDiscovery api;
    private final BiFunction<StoragePool, String, List<GenericKubernetesResource>> desired;

    /** desired: the classes from the pool and the served version (a pure function). */
    GatedClassApplier(ClassApiDiscovery api, BiFunction<StoragePool, String, List<GenericKubernetesResource>> desired) {
        this.api = api;
        this.desired = desired;
    }

    /** "Kind NAME" of each class at a wanted name that exists without the pool as owner. */
    public List<String> foreign(StoragePool pool, KubernetesClient client) {
        Optional<String> version = api.servedVersion(client);
        if (version.isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (GenericKubernetesResource d : desired.apply(pool, version.get())) {
            GenericKubernetesResource actual = classes(client, version.get()).withName(d.getMetadata().getName()).get();
            if (actual != null && !OwnershipCheck.ownedBy(actual, pool)) {
                out.add(api.kind() + " " + d.getMetadata().getName());
            }
        }
        return out;
    }

    /** Applies the pool's classes where the API is served; returns them, or none when it is not served. */
    public List<GenericKubernetesResource> reconcile(StoragePool pool, KubernetesClient client) {
        Optional<String> version = api.servedVersion(client);
        if (version.isEmpty()) {
            return List.of();
        }
        List<GenericKubernetesResource> wanted = desired.apply(pool, version.get());
        try {
            var classes = classes(client, version.get());
            List<GenericKubernetesResource> applied = new ArrayList<>();
            for (GenericKubernetesResource d : wanted) {
                GenericKubernetesResource actual = classes.withName(d.getMetadata().getName()).get();
                if (actual != null && !OwnershipCheck.ownedBy(actual, pool)) {
                    continue; // someone else's: reported by foreign(), never applied over
                }
                d.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion(pool.getApiVersion())
                        .withKind(pool.getKind()).withName(pool.getMetadata().getName()).withUid(pool.getMetadata().getUid())
                        .withController(true).withBlockOwnerDeletion(false).build()));
                applied.add(classes.withName(d.getMetadata().getName())
                        .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(PoolNames.MANAGER)
                                .withForce(true).build(), d));
            }
            Set<String> names = wanted.stream().map(d -> d.getMetadata().getName()).collect(Collectors.toSet());
            for (GenericKubernetesResource old : classes.withLabel(PoolNames.POOL, pool.getMetadata().getName()).list().getItems()) {
                if (!names.contains(old.getMetadata().getName())
                        && ManagedRecord.recorded(pool.getStatus() == null ? null : pool.getStatus().getManagedObjects(), old)) {
                    classes.withName(old.getMetadata().getName()).delete();
                }
            }
            return applied;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                api.forget(client); // the API went away: nothing to write any more
                return List.of();
            }
            throw e;
        }
    }

    private NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> classes(
            KubernetesClient client, String version) {
        return client.genericKubernetesResources(api.context(version));
    }
}
