package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.loopcsi.operator.api.FsType;
import io.loopcsi.operator.api.ReclaimPolicy;

class StorageClassesTest {

    @Test
    void oneClassPerEntryWaitingForTheFirstConsumer() {
        var m = StorageClasses.desired(Pools.full("p1"));
        assertEquals(List.of("fast", "fast-block"), List.copyOf(m.keySet()));
        var fast = m.get("fast");
        assertEquals("p1.loopcsi.io", fast.getProvisioner());
        assertEquals("WaitForFirstConsumer", fast.getVolumeBindingMode());
        assertEquals("ext4", fast.getParameters().get(StorageClasses.FSTYPE_PARAMETER), "first of the pool's fsTypes");
        assertEquals("true", fast.getMetadata().getAnnotations().get(StorageClasses.DEFAULT_CLASS_ANNOTATION));
        assertEquals("Delete", fast.getReclaimPolicy());
        assertTrue(fast.getAllowVolumeExpansion());
        var block = m.get("fast-block");
        assertFalse(block.getParameters().containsKey(StorageClasses.FSTYPE_PARAMETER));
        assertFalse(block.getMetadata().getAnnotations().containsKey(StorageClasses.DEFAULT_CLASS_ANNOTATION));
    }

    @Test
    void explicitFsTypeReclaimAndExpansion() {
        var p = Pools.full("p1");
        var c = p.getSpec().getStorageClasses().get(0);
        c.setFsType(FsType.xfs);
        c.setReclaimPolicy(ReclaimPolicy.Retain);
        c.setAllowVolumeExpansion(false);
        var sc = StorageClasses.desired(p).get("fast");
        assertEquals("xfs", sc.getParameters().get(StorageClasses.FSTYPE_PARAMETER));
        assertEquals("Retain", sc.getReclaimPolicy());
        assertFalse(sc.getAllowVolumeExpansion());
    }

    @Test
    void noClassesNoObjects() {
        assertTrue(StorageClasses.desired(Pools.minimal("p1")).isEmpty());
    }
}
