package io.loopcsi.cli.evacuate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;

class NewObjectsTest {

    final PersistentVolumeClaim claim = new PersistentVolumeClaimBuilder().withNewMetadata().withNamespace("shop").withName("db")
            .withUid("u1").addToLabels("app", "db").addToAnnotations("team", "red").addToAnnotations("pv.kubernetes.io/bind-completed", "yes")
            .addToAnnotations("volume.kubernetes.io/selected-node", "node-a").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
            .withStorageClassName("p-xfs").withVolumeMode("Filesystem").withVolumeName("pvc-old").withNewResources()
            .addToRequests("storage", new Quantity("1Gi")).endResources().endSpec().withNewStatus().withPhase("Bound").endStatus().build();
    final PersistentVolume old = new PersistentVolumeBuilder().withNewMetadata().withName("pvc-old").endMetadata().withNewSpec()
            .withStorageClassName("p-xfs").withNewCsi().withDriver("p.loopcsi.io").withVolumeHandle("vol-old").withFsType("xfs")
            .withVolumeAttributes(Map.of("storage.kubernetes.io/csiProvisionerIdentity", "123-p.loopcsi.io")).endCsi().endSpec().build();
    final MoveRecord record = new MoveRecord("node-a", "node-b", "pvc-new", "Delete", NewObjects.recordOf(claim), MoveRecord.COPY);

    @Test
    void theClaimMadeAgainKeepsNameLabelsUserAnnotationsAndSizeAndNamesTheNewPv() {
        PersistentVolumeClaim c = NewObjects.claimAgain(record);
        assertEquals("shop", c.getMetadata().getNamespace());
        assertEquals("db", c.getMetadata().getName());
        assertNull(c.getMetadata().getUid());
        assertEquals(Map.of("app", "db"), c.getMetadata().getLabels());
        assertEquals(Map.of("team", "red"), c.getMetadata().getAnnotations());
        assertEquals(new Quantity("1Gi"), c.getSpec().getResources().getRequests().get("storage"));
        assertEquals("pvc-new", c.getSpec().getVolumeName());
        assertEquals("p-xfs", c.getSpec().getStorageClassName());
        assertNull(c.getStatus());
    }

    @Test
    void theNewPvIsWhatCsiProvisionerWritesOnTheTargetNode() {
        StorageClass sc = new StorageClassBuilder().withNewMetadata().withName("p-xfs").endMetadata().withReclaimPolicy("Retain")
                .withMountOptions("noatime").build();
        PersistentVolume pv = NewObjects.pv(old, record, "vol-new", 1L << 30, sc);
        assertEquals("pvc-new", pv.getMetadata().getName());
        assertEquals("p.loopcsi.io", pv.getMetadata().getAnnotations().get("pv.kubernetes.io/provisioned-by"));
        assertEquals("vol-new", pv.getSpec().getCsi().getVolumeHandle());
        assertEquals("xfs", pv.getSpec().getCsi().getFsType());
        assertEquals("123-p.loopcsi.io", pv.getSpec().getCsi().getVolumeAttributes().get("storage.kubernetes.io/csiProvisionerIdentity"));
        assertEquals("Retain", pv.getSpec().getPersistentVolumeReclaimPolicy(), "the class' policy");
        assertEquals(List.of("noatime"), pv.getSpec().getMountOptions());
        assertEquals(new Quantity("1073741824"), pv.getSpec().getCapacity().get("storage"));
        assertEquals("db", pv.getSpec().getClaimRef().getName());
        assertNull(pv.getSpec().getClaimRef().getUid());
        var expr = pv.getSpec().getNodeAffinity().getRequired().getNodeSelectorTerms().get(0).getMatchExpressions().get(0);
        assertEquals("topology.loopcsi.io/node", expr.getKey());
        assertEquals(List.of("node-b"), expr.getValues());
        assertEquals("Delete", NewObjects.pv(old, record, "vol-new", 1L << 30, null).getSpec().getPersistentVolumeReclaimPolicy(),
                "without its class: the old PV's policy before the move");
        assertFalse(pv.getSpec().getAccessModes().isEmpty());
    }

    @Test
    void aBlockVolumesPvHasNoFsType() {
        claim.getSpec().setVolumeMode("Block");
        MoveRecord r = new MoveRecord("node-a", "node-b", "pvc-new", "Delete", NewObjects.recordOf(claim), MoveRecord.COPY);
        PersistentVolume pv = NewObjects.pv(old, r, "vol-new", 1L << 20, null);
        assertNull(pv.getSpec().getCsi().getFsType());
        assertEquals("Block", pv.getSpec().getVolumeMode());
    }

    @Test
    void aClaimMovedBeforeIsMadeAgainWithoutItsOldMovedFrom() {
        claim.getMetadata().getAnnotations().put(NewObjects.MOVED_FROM, "node-z");
        MoveRecord r = new MoveRecord("node-a", "node-b", "pvc-new", "Delete", NewObjects.recordOf(claim), MoveRecord.COPY);
        assertEquals(Map.of("team", "red"), NewObjects.claimAgain(r).getMetadata().getAnnotations(),
                "written after the binding, with this move's node: a value already there would make that write no update");
    }

    @Test
    void thePvsHalfOfTheBindingIsItsClaimRefWithTheClaimsUid() {
        PersistentVolume pv = NewObjects.pv(old, record, "vol-new", 1L << 30, null);
        PersistentVolumeClaim again = NewObjects.claimAgain(record);
        again.getMetadata().setUid("u2");
        assertFalse(NewObjects.pvBoundTo(pv, again), "as made: the claimRef has no UID");
        pv.getSpec().getClaimRef().setUid("u1");
        assertFalse(NewObjects.pvBoundTo(pv, again), "the old claim's UID");
        pv.getSpec().getClaimRef().setUid("u2");
        assertTrue(NewObjects.pvBoundTo(pv, again));
        assertFalse(NewObjects.pvBoundTo(null, again));
        assertFalse(NewObjects.pvBoundTo(pv, null));
    }
}
