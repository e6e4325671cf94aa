package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.storage.CSIDriver;

class CsiDriverSpecTest {

    @Test
    void nodeLocalPersistentCapacityTrackedDriverNamedAfterThePool() {
        CSIDriver d = CsiDriverSpec.desired(Pools.minimal("fast"), ClusterInfo.CURRENT);
        assertEquals("fast.loopcsi.io", d.getMetadata().getName());
        assertFalse(d.getSpec().getAttachRequired());
        assertTrue(d.getSpec().getStorageCapacity());
        assertEquals("File", d.getSpec().getFsGroupPolicy());
        assertEquals(List.of("Persistent"), d.getSpec().getVolumeLifecycleModes());
        assertTrue(d.getSpec().getPodInfoOnMount());
        assertEquals("loopcsi-operator", d.getMetadata().getLabels().get(PoolNames.MANAGED_BY));
    }

    @Test
    void fieldsTheServerDoesNotServeAreLeftOut() {
        CSIDriver d = CsiDriverSpec.desired(Pools.minimal("fast"), new ClusterInfo(false, false, false));
        assertNull(d.getSpec().getStorageCapacity());
        assertNull(d.getSpec().getFsGroupPolicy());
    }

    @Test
    void anExplicitDriverNameWins() {
        var p = Pools.minimal("fast");
        p.getSpec().setDriverName("x.example.com");
        assertEquals("x.example.com", CsiDriverSpec.desired(p, ClusterInfo.CURRENT).getMetadata().getName());
    }
}
