package io.loopcsi.operator.desired;

import java.util.List;
import java.util.Map;

import io.loopcsi.operator.api.FsType;
import io.loopcsi.operator.api.PoolStorageClass;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.api.StoragePoolSpec;
import io.loopcsi.operator.api.VolumeMode;

/** Test pools. */
public final class Pools {

    private Pools() {
    }

    public static StoragePool minimal(String name) {
        StoragePoolSpec spec = new StoragePoolSpec();
        spec.setCapacityPerNode("20Gi");
        StoragePool p = new StoragePool(name, spec);
        p.getMetadata().setUid("uid-" + name);
        p.getMetadata().setGeneration(1L);
        return p;
    }

    public static StoragePool full(String name) {
        StoragePool p = minimal(name);
        p.getSpec().setNodeSelector(Map.of("disk", "fast"));
        p.getSpec().setFsTypes(List.of(FsType.ext4, FsType.xfs));
        PoolStorageClass fs = new PoolStorageClass("fast");
        fs.setIsDefault(true);
        PoolStorageClass block = new PoolStorageClass("fast-block");
        block.setVolumeMode(VolumeMode.Block);
        p.getSpec().setStorageClasses(List.of(fs, block));
        return p;
    }
}
