package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class VolumeSnapshotClassSpecTest {

    @Test
    void oneClassOfThePoolsDriverThatDeletesItsSnapshots() {
        var c = VolumeSnapshotClassSpec.desired(Pools.minimal("p1"), "v1");
        assertEquals("snapshot.storage.k8s.io/v1", c.getApiVersion());
        assertEquals("VolumeSnapshotClass", c.getKind());
        assertEquals("p1-snapshots", c.getMetadata().getName());
        assertNull(c.getMetadata().getNamespace(), "cluster-scoped");
        assertEquals("p1.loopcsi.io", c.getAdditionalProperties().get("driver"));
        assertEquals("Delete", c.getAdditionalProperties().get("deletionPolicy"));
        assertFalse(c.getAdditionalProperties().containsKey("spec"), "fields at the top level, as in the CRD");
        assertEquals("p1", c.getMetadata().getLabels().get(PoolNames.POOL), "found again by the pool label");
        assertFalse(c.getMetadata().getAnnotations().containsKey(VolumeSnapshotClassSpec.DEFAULT_CLASS_ANNOTATION), "not the default unless asked");
    }

    @Test
    void theServedVersionANameOfTheAdminsAndTheDefaultClass() {
        var p = Pools.minimal("p1");
        p.getSpec().setDriverName("custom.example.org");
        p.getSpec().getSnapshots().setClassName("fast-snaps");
        p.getSpec().getSnapshots().setDefaultClass(true);
        var c = VolumeSnapshotClassSpec.desired(p, "v1beta1");
        assertEquals("snapshot.storage.k8s.io/v1beta1", c.getApiVersion());
        assertEquals("fast-snaps", c.getMetadata().getName());
        assertEquals("custom.example.org", c.getAdditionalProperties().get("driver"));
        assertEquals("true", c.getMetadata().getAnnotations().get(VolumeSnapshotClassSpec.DEFAULT_CLASS_ANNOTATION));
    }
}
