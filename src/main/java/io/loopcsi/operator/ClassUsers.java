package io.loopcsi.operator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Who still uses a StorageClass: PersistentVolumeClaims that name it (bound or waiting to be
 * provisioned) and PersistentVolumes that name it. A class with users is not deleted: a pending
 * claim would never be provisioned, and expanding a bound one is admitted only through its class.
 */
public final class ClassUsers {

    private ClassUsers() {
    }

    /** The users of each of {@code classes} that has any, as "PVC namespace/name" and "PV name", sorted by class. */
    public static Map<String, List<String>> of(KubernetesClient client, Set<String> classes) {
        Map<String, List<String>> out = new TreeMap<>();
        if (classes.isEmpty()) {
            return out;
        }
        for (PersistentVolumeClaim c : client.persistentVolumeClaims().inAnyNamespace().list().getItems()) {
            String sc = c.getSpec() == null ? null : c.getSpec().getStorageClassName();
            if (sc != null && classes.contains(sc)) {
                out.computeIfAbsent(sc, k -> new ArrayList<>()).add("PVC " + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName());
            }
        }
        for (PersistentVolume v : client.persistentVolumes().list().getItems()) {
            String sc = v.getSpec() == null ? null : v.getSpec().getStorageClassName();
            if (sc != null && classes.contains(sc)) {
                out.computeIfAbsent(sc, k -> new ArrayList<>()).add("PV " + v.getMetadata().getName());
            }
        }
        return out;
    }

    /** "StorageClass a (PVC ns/x, PV y), ..." with at most {@code max} users named per class. */
    public static String describe(Map<String, List<String>> users, int max) {
        List<String> parts = new ArrayList<>();
        users.forEach((sc, u) -> parts.add("StorageClass " + sc + " (" + String.join(", ", u.subList(0, Math.min(max, u.size())))
                + (u.size() > max ? " and " + (u.size() - max) + " more" : "") + ")"));
        return String.join("; ", parts);
    }
}
