package io.loopcsi.operator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.operator.api.ManagedObject;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.ClusterInfo;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.PrometheusRuleSpec;
import io.loopcsi.operator.desired.ServiceMonitorSpec;
import io.loopcsi.operator.desired.StorageClasses;
import io.loopcsi.operator.desired.VolumeAttributesClasses;
import io.loopcsi.operator.desired.VolumeGroupSnapshotClassSpec;
import io.loopcsi.operator.desired.VolumeSnapshotClassSpec;
import io.loopcsi.operator.status.ManagedRecord;
import io.loopcsi.operator.status.OwnershipCheck;

/**
 * Reads what the pool's ownership record ({@link ManagedRecord}) is made from: the objects at the
 * names the pool wants, whether recorded ones still exist, the copies that carry the pool's marks;
 * and, before a pool goes, takes the pool's owner reference off those copies so that Kubernetes'
 * garbage collector, which follows owner references only, keeps them.
 */
public final class PoolOwnership {

    private PoolOwnership() {
    }

    /** Every object the pool wants, by kind, namespace and name (optional kinds included whether or not they are served). */
    public static Map<String, HasMetadata> wanted(StoragePool pool, String ns, ClusterInfo cluster) {
        Map<String, HasMetadata> out = new LinkedHashMap<>();
        List<HasMetadata> all = new ArrayList<>(StoragePoolReconciler.namedObjects(pool, ns, cluster));
        all.add(ServiceMonitorSpec.desired(pool, ns));
        all.add(PrometheusRuleSpec.desired(pool, ns));
        all.add(VolumeSnapshotClassSpec.desired(pool, SnapshotApiDiscovery.V1));
        all.addAll(VolumeGroupSnapshotClassSpec.desired(pool, VolumeGroupSnapshotClassSpec.VERSIONS.get(0)));
        all.addAll(VolumeAttributesClasses.desired(pool, VolumeAttributesClasses.VERSIONS.get(0)));
        for (HasMetadata o : all) {
            out.put(ManagedRecord.key(o), o);
        }
        return out;
    }

    /** The record after this reconcile: see {@link ManagedRecord#next}. */
    public static List<ManagedObject> record(KubernetesClient client, StoragePool pool, Map<String, HasMetadata> wanted) {
        List<HasMetadata> found = new ArrayList<>();
        for (HasMetadata w : wanted.values()) {
            PoolObjectKinds.of(w.getKind()).flatMap(k -> k.get(client, w.getMetadata().getNamespace(), w.getMetadata().getName()))
                    .ifPresent(found::add);
        }
        Set<String> foundUids = found.stream().map(o -> o.getMetadata().getUid()).collect(Collectors.toSet());
        List<ManagedObject> previous = pool.getStatus() == null ? null : pool.getStatus().getManagedObjects();
        return ManagedRecord.next(previous, found, pool, m -> foundUids.contains(m.getUid())
                || PoolObjectKinds.of(m.getKind()).flatMap(k -> k.get(client, m.getNamespace(), m.getName()))
                        .map(o -> m.getUid().equals(o.getMetadata().getUid())).orElse(false));
    }

    /** Objects labelled with the pool's name that are not the pool's own (a copy made with kubectl get -o yaml keeps the labels). */
    public static List<String> copies(KubernetesClient client, StoragePool pool, List<ManagedObject> record, Set<String> wanted) {
        List<HasMetadata> seen = new ArrayList<>();
        for (PoolObjectKinds.Kind k : PoolObjectKinds.ALL) {
            seen.addAll(k.list(client, PoolNames.POOL + "=" + pool.getMetadata().getName()));
        }
        return ManagedRecord.copies(seen, record, pool, wanted);
    }

    /** The pool's StorageClasses that are recorded but no longer in its spec (kept while used). */
    public static Set<String> unwantedClasses(StoragePool pool, List<ManagedObject> record) {
        Set<String> wanted = StorageClasses.desired(pool).keySet();
        return record == null ? Set.of()
                : record.stream().filter(m -> "StorageClass".equals(m.getKind()) && !wanted.contains(m.getName())).map(ManagedObject::getName)
                        .collect(Collectors.toSet());
    }

    /**
     * Before the pool goes: every object of any pool kind, in any namespace, that carries the pool's
     * owner reference but is not the pool's own loses that reference. Returns them, "Kind [ns/]name".
     */
    public static List<String> releaseCopies(KubernetesClient client, StoragePool pool, String ns, ClusterInfo cluster) {
        String uid = pool.getMetadata().getUid();
        List<ManagedObject> record = pool.getStatus() == null ? null : pool.getStatus().getManagedObjects();
        Set<String> wanted = wanted(pool, ns, cluster).keySet();
        List<String> released = new ArrayList<>();
        for (PoolObjectKinds.Kind k : PoolObjectKinds.ALL) {
            for (HasMetadata o : k.list(client, null)) {
                if (OwnershipCheck.ownedBy(o, pool) && !ManagedRecord.ours(record, o, pool, wanted)) {
                    k.removeOwner(client, o, uid);
                    released.add(ManagedRecord.of(o).describe());
                }
            }
        }
        return released;
    }
}
