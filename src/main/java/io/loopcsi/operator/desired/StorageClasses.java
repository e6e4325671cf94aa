package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.loopcsi.operator.api.FsType;
import io.loopcsi.operator.api.PoolStorageClass;
import io.loopcsi.operator.api.ReclaimPolicy;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.api.VolumeMode;

/**
 * The StorageClasses of a pool, by name. WaitForFirstConsumer: a volume is a file on one node,
 * so it must be made where the pod lands. Filesystem classes name their fsType; Block classes
 * name none (a block PVC gets a raw device whatever the class says).
 */
public final class StorageClasses {

    public static final String DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";
    public static final String FSTYPE_PARAMETER = "csi.storage.k8s.io/fstype";

    private StorageClasses() {
    }

    public static Map<String, StorageClass> desired(StoragePool pool) {
        Map<String, StorageClass> out = new LinkedHashMap<>();
        List<PoolStorageClass> classes = pool.getSpec().getStorageClasses();
        if (classes == null) {
            return out;
        }
        for (PoolStorageClass c : classes) {
            out.put(c.getName(), desired(pool, c));
        }
        return out;
    }

    static StorageClass desired(StoragePool pool, PoolStorageClass c) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("loopcsi.io/pool", pool.getMetadata().getName());
        if (c.getVolumeMode() != VolumeMode.Block) {
            params.put(FSTYPE_PARAMETER, fsType(pool, c).name());
        }
        Map<String, String> annotations = new LinkedHashMap<>();
        if (Boolean.TRUE.equals(c.getIsDefault())) {
            annotations.put(DEFAULT_CLASS_ANNOTATION, "true");
        }
        return new StorageClassBuilder()
                .withNewMetadata().withName(c.getName()).withLabels(PoolNames.labels(pool)).withAnnotations(annotations).endMetadata()
                .withProvisioner(pool.driverName())
                .withParameters(params)
                .withReclaimPolicy((c.getReclaimPolicy() == null ? ReclaimPolicy.Delete : c.getReclaimPolicy()).name())
                .withAllowVolumeExpansion(c.getAllowVolumeExpansion() == null || c.getAllowVolumeExpansion())
                .withVolumeBindingMode("WaitForFirstConsumer")
                .build();
    }

    static FsType fsType(StoragePool pool, PoolStorageClass c) {
        if (c.getFsType() != null) {
            return c.getFsType();
        }
        List<FsType> fs = pool.getSpec().getFsTypes();
        return fs == null || fs.isEmpty() ? FsType.xfs : fs.get(0);
    }
}
