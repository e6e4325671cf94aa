package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import csi.v1.ControllerExpandVolumeResponse;
import csi.v1.CreateSnapshotResponse;
import csi.v1.CreateVolumeRequest;
import csi.v1.CreateVolumeResponse;
import csi.v1.GetCapacityResponse;
import csi.v1.Volume;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.StorageClasses;
import io.loopcsi.testing.SidecarRequests;
import io.loopcsi.testing.SidecarRequests.Claim;
import io.loopcsi.testing.SidecarRequests.Provisioner;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Each csi-provisioner, csi-resizer and csi-snapshotter release the operator deploys, replayed:
 * the requests as that release's source builds them (SidecarRequests) for the StorageClasses the
 * operator writes for the README's example pool, and the answers such a release needs to do its
 * job (a capacity it publishes, a volume with the node affinity it writes into the PV, the same
 * volume again for a retried call, a content source echoed for a restore, a ready snapshot with
 * its size and time). Issue 21: v2.1.2's GetCapacity (one mount capability, access mode UNKNOWN)
 * was refused, so the scheduler found no capacity. PoolServesVolumesKubeIT replays the same
 * against the controller role.
 */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class SidecarReplayTest extends CsiTestBase {

    static final String NODE = "test-node";
    static final long MIB = Csi.MIB;

    @Test
    void everyDeployedReleasesRequestsGetTheAnswersItNeeds() throws IOException {
        Map<String, StorageClass> classes = exampleClasses();
        for (Provisioner v : Provisioner.values()) {
            for (StorageClass c : classes.values()) {
                replay(v, c);
            }
        }
    }

    private void replay(Provisioner v, StorageClass c) {
        String what = v + " " + c.getMetadata().getName();
        SidecarRequests.StorageClass sc = new SidecarRequests.StorageClass(c.getParameters(), List.of());
        boolean block = !c.getParameters().containsKey(StorageClasses.FSTYPE_PARAMETER);
        String fs = block ? null : c.getParameters().get(StorageClasses.FSTYPE_PARAMETER);

        GetCapacityResponse cap = csi.controller.getCapacity(SidecarRequests.getCapacity(v, sc, SidecarRequests.segment(NODE)));
        assertTrue(cap.getAvailableCapacity() > 30L * 1024 * MIB, what + ": capacity of an almost empty 40Gi pool: " + cap);
        assertTrue(cap.hasMaximumVolumeSize() && cap.getMaximumVolumeSize().getValue() > 0, what + ": maximumVolumeSize (v2.2+): " + cap);

        long bytes = (block ? 64 : 512) * MIB;
        Claim claim = new Claim(uid(v, c, "data"), "data", "default", bytes, List.of("ReadWriteOnce"), block);
        Map<String, String> vac = Map.of("provisioning", "thin", "directIO", "auto");
        CreateVolumeRequest create = SidecarRequests.createVolume(v, sc, claim, "xfs", NODE, true, null, vac);
        Volume vol = created(what, create, bytes);
        volumes.add(vol.getVolumeId());
        assertEquals(vol.getVolumeId(), csi.controller.createVolume(create).getVolume().getVolumeId(), what + ": a retried CreateVolume");

        ControllerExpandVolumeResponse grown = csi.controller.controllerExpandVolume(SidecarRequests.expandVolume(vol.getVolumeId(), 2 * bytes,
                block, fs, List.of(), "ReadWriteOnce", true));
        assertTrue(grown.getCapacityBytes() >= 2 * bytes && grown.getNodeExpansionRequired(), what + ": " + grown);

        CreateSnapshotResponse snap = csi.controller.createSnapshot(SidecarRequests.createSnapshot(vol.getVolumeId(), uid(v, c, "snap"),
                "snap", "default", "snapcontent-" + uid(v, c, "snap"), Map.of()));
        snapshots.add(snap.getSnapshot().getSnapshotId());
        assertTrue(snap.getSnapshot().getReadyToUse() && snap.getSnapshot().getSizeBytes() >= 2 * bytes
                && snap.getSnapshot().getCreationTime().getSeconds() > 0, what + ": " + snap);
        assertEquals(snap.getSnapshot().getSnapshotId(), csi.controller.createSnapshot(SidecarRequests.createSnapshot(vol.getVolumeId(),
                uid(v, c, "snap"), "snap", "default", "snapcontent-" + uid(v, c, "snap"), Map.of())).getSnapshot().getSnapshotId(),
                what + ": csi-snapshotter polls with the same CreateSnapshot until ready");
        assertEquals(1, csi.controller.listSnapshots(SidecarRequests.listSnapshot(snap.getSnapshot().getSnapshotId())).getEntriesCount());

        Claim restored = new Claim(uid(v, c, "restored"), "restored", "default", 2 * bytes, List.of("ReadWriteOnce"), block);
        Volume r = created(what + " restore", SidecarRequests.createVolume(v, sc, restored, "xfs", NODE, true,
                SidecarRequests.fromSnapshot(snap.getSnapshot().getSnapshotId()), null), 2 * bytes);
        volumes.add(r.getVolumeId());
        assertEquals(snap.getSnapshot().getSnapshotId(), r.getContentSource().getSnapshot().getSnapshotId(),
                what + ": csi-provisioner deletes a restore whose answer has no content source");
        Claim clone = new Claim(uid(v, c, "clone"), "clone", "default", 2 * bytes, List.of("ReadWriteOnce"), block);
        Volume cl = created(what + " clone", SidecarRequests.createVolume(v, sc, clone, "xfs", NODE, true,
                SidecarRequests.fromVolume(vol.getVolumeId()), null), 2 * bytes);
        volumes.add(cl.getVolumeId());
        assertEquals(vol.getVolumeId(), cl.getContentSource().getVolume().getVolumeId());

        csi.controller.controllerModifyVolume(SidecarRequests.modifyVolume(vol.getVolumeId(), vac));
        csi.controller.controllerModifyVolume(SidecarRequests.modifyVolume(vol.getVolumeId(), vac)); // the whole class, every time

        var group = csi.group.createVolumeGroupSnapshot(SidecarRequests.createGroupSnapshot(uid(v, c, "group"),
                List.of(vol.getVolumeId(), cl.getVolumeId()))).getGroupSnapshot();
        List<String> members = group.getSnapshotsList().stream().map(s -> s.getSnapshotId()).toList();
        assertTrue(group.getReadyToUse() && members.size() == 2, what + ": " + group);
        assertEquals(group.getGroupSnapshotId(), csi.group.getVolumeGroupSnapshot(SidecarRequests.getGroupSnapshot(group.getGroupSnapshotId(),
                members)).getGroupSnapshot().getGroupSnapshotId());
        csi.group.deleteVolumeGroupSnapshot(SidecarRequests.deleteGroupSnapshot(group.getGroupSnapshotId(), members));
        csi.group.deleteVolumeGroupSnapshot(SidecarRequests.deleteGroupSnapshot(group.getGroupSnapshotId(), members));

        List<String> ids = new ArrayList<>(List.of(r.getVolumeId(), cl.getVolumeId(), vol.getVolumeId()));
        csi.controller.deleteSnapshot(SidecarRequests.deleteSnapshot(snap.getSnapshot().getSnapshotId()));
        for (String id : ids) {
            csi.controller.deleteVolume(SidecarRequests.deleteVolume(id));
            csi.controller.deleteVolume(SidecarRequests.deleteVolume(id)); // csi-provisioner retries a delete it did not see succeed
            assertTrue(!Files.exists(StandaloneDriverResource.dir().resolve("pool/volumes/" + id + ".img")), what + ": " + id + " deleted");
        }
    }

    /** A volume as csi-provisioner needs it: at least the size asked for, on the selected node (its PV's node affinity). */
    private static Volume created(String what, CreateVolumeRequest req, long bytes) {
        CreateVolumeResponse r = csi.controller.createVolume(req);
        assertTrue(r.getVolume().getCapacityBytes() >= bytes, what + ": " + r);
        assertEquals(List.of(SidecarRequests.segment(NODE)), r.getVolume().getAccessibleTopologyList().stream().map(t -> t.getSegmentsMap()).toList(),
                what + ": csi-provisioner makes the PV's node affinity from accessible_topology");
        return r.getVolume();
    }

    private static String uid(Provisioner v, StorageClass c, String what) {
        return java.util.UUID.nameUUIDFromBytes((v + c.getMetadata().getName() + what).getBytes()).toString();
    }

    /** The StorageClasses the operator writes for the README's example pool (kubernetes/examples/storagepool.yaml). */
    static Map<String, StorageClass> exampleClasses() throws IOException {
        try (InputStream in = Files.newInputStream(Path.of("kubernetes/examples/storagepool.yaml"))) {
            return StorageClasses.desired(Serialization.unmarshal(in, StoragePool.class));
        }
    }
}
