package io.loopcsi.operator.desired;

import java.util.List;

import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's CSIDriver: no attach step (volumes are node-local), storage capacity tracking so
 * the scheduler only picks nodes with room, fsGroup applied by kubelet (File), persistent
 * volumes only, and pod info on mount (the node role labels its metrics by pod).
 */
public final class CsiDriverSpec {

    private CsiDriverSpec() {
    }

    public static CSIDriver desired(StoragePool pool, ClusterInfo cluster) {
        return new CSIDriverBuilder()
                .withNewMetadata().withName(pool.driverName()).withLabels(PoolNames.labels(pool)).endMetadata()
                .withNewSpec()
                .withAttachRequired(false)
                .withPodInfoOnMount(true)
                .withVolumeLifecycleModes(List.of("Persistent"))
                .withStorageCapacity(cluster.csiStorageCapacity() ? Boolean.TRUE : null)
                .withFsGroupPolicy(cluster.fsGroupPolicy() ? "File" : null)
                .endSpec()
                .build();
    }
}
