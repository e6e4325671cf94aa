package io.loopcsi.operator.status;

import java.util.List;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;

/** The PersistentVolumes of one CSI driver: what holds a pool's deletion, and what it has allocated. */
public record PoolVolumes(List<String> names, long allocatedBytes) {

    public static PoolVolumes of(KubernetesClient client, String driverName) {
        return of(client.persistentVolumes().list().getItems(), driverName);
    }

    public static PoolVolumes of(List<PersistentVolume> all, String driverName) {
        List<PersistentVolume> mine = all.stream()
                .filter(pv -> pv.getSpec() != null && pv.getSpec().getCsi() != null && driverName.equals(pv.getSpec().getCsi().getDriver()))
                .toList();
        long bytes = mine.stream().map(pv -> pv.getSpec().getCapacity() == null ? null : pv.getSpec().getCapacity().get("storage"))
                .filter(q -> q != null).mapToLong(q -> Quantity.getAmountInBytes(q).longValue()).sum();
        return new PoolVolumes(mine.stream().map(pv -> pv.getMetadata().getName()).sorted().toList(), bytes);
    }

    public int count() {
        return names.size();
    }

    /** At most {@code max} names, then "and N more". */
    public String describe(int max) {
        if (names.size() <= max) {
            return String.join(", ", names);
        }
        return String.join(", ", names.subList(0, max)) + " and " + (names.size() - max) + " more";
    }
}
