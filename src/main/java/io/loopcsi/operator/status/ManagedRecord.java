package io.loopcsi.operator.status;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.loopcsi.operator.api.ManagedObject;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;

/**
 * Which objects are the pool's own: the operator updates and deletes only these. An object is the
 * pool's when its UID is in the pool's record ({@code status.managedObjects}), or when it stands at
 * a name the pool wants now and carries the pool's owner reference: that adopts what an older
 * release made (it kept no record) and what a reconcile created before it could write its status.
 * Everything else, whatever labels, annotations or owner references it carries, is someone
 * else's: a copy of a pool's StorageClass made with kubectl get -o yaml is never touched.
 * Pure: the reconciler reads the objects.
 */
public final class ManagedRecord {

    private ManagedRecord() {
    }

    /** The identity of a wanted object, without its UID: kind, namespace (empty when cluster-scoped), name. */
    public static String key(String kind, String namespace, String name) {
        return kind + "/" + (namespace == null ? "" : namespace) + "/" + name;
    }

    public static String key(HasMetadata o) {
        return key(o.getKind(), o.getMetadata().getNamespace(), o.getMetadata().getName());
    }

    public static ManagedObject of(HasMetadata o) {
        return new ManagedObject(o.getKind(), o.getMetadata().getNamespace(), o.getMetadata().getName(), o.getMetadata().getUid());
    }

    public static boolean recorded(List<ManagedObject> record, HasMetadata o) {
        String uid = o.getMetadata().getUid();
        return record != null && uid != null && record.stream().anyMatch(m -> uid.equals(m.getUid()));
    }

    /** The pool's own object: recorded, or adoptable (at a wanted name, with the pool's owner reference). */
    public static boolean ours(List<ManagedObject> record, HasMetadata o, StoragePool pool, Set<String> wanted) {
        return recorded(record, o) || (wanted.contains(key(o)) && OwnershipCheck.ownedBy(o, pool));
    }

    /** Carries one of the pool's marks: its owner reference, or its pool label. */
    public static boolean marked(HasMetadata o, StoragePool pool) {
        Map<String, String> labels = o.getMetadata().getLabels();
        return OwnershipCheck.ownedBy(o, pool) || (labels != null && pool.getMetadata().getName().equals(labels.get(PoolNames.POOL)));
    }

    /** Objects that carry the pool's marks but are not its own, as "Kind [namespace/]name", sorted. */
    public static List<String> copies(List<? extends HasMetadata> seen, List<ManagedObject> record, StoragePool pool, Set<String> wanted) {
        return seen.stream().filter(o -> marked(o, pool) && !ours(record, o, pool, wanted)).map(o -> of(o).describe()).distinct().sorted().toList();
    }

    /**
     * The record after a reconcile: what was recorded and still exists under the same UID
     * ({@code exists}), and every object at a wanted name that is the pool's (found: what the
     * reconcile read back after applying, owned by the pool or already recorded).
     */
    public static List<ManagedObject> next(List<ManagedObject> previous, List<? extends HasMetadata> found, StoragePool pool,
            Predicate<ManagedObject> exists) {
        Map<String, ManagedObject> out = new LinkedHashMap<>();
        for (ManagedObject m : previous == null ? List.<ManagedObject>of() : previous) {
            if (m.getUid() != null && exists.test(m)) {
                out.put(m.getUid(), m);
            }
        }
        for (HasMetadata o : found) {
            if (o.getMetadata().getUid() != null && (OwnershipCheck.ownedBy(o, pool) || recorded(previous, o))) {
                out.put(o.getMetadata().getUid(), of(o));
            }
        }
        List<ManagedObject> list = new ArrayList<>(out.values());
        list.sort(java.util.Comparator.comparing((ManagedObject m) -> m.getKind()).thenComparing(m -> Objects.toString(m.getNamespace(), ""))
                .thenComparing(ManagedObject::getName));
        return list;
    }
}
