package io.loopcsi.csi;

import static io.loopcsi.testing.Data.randomBytes;
import static io.loopcsi.testing.Data.readAt;
import static io.loopcsi.testing.Data.writeAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.junit.jupiter.api.Test;

import csi.v1.CapacityRange;
import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.ControllerExpandVolumeResponse;
import csi.v1.ControllerGetVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.ListSnapshotsRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.NodeExpandVolumeRequest;
import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.NodeGetVolumeStatsResponse;
import csi.v1.Snapshot;
import csi.v1.VolumeCapability;
import csi.v1.VolumeContentSource;
import csi.v1.VolumeUsage;
import io.loopcsi.engine.MountTable;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** Whole volume lifecycles through all three CSI services, on real loop devices, xfs and mounts. */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class VolumeLifecycleTest extends CsiTestBase {

    @Test
    void xfsDataSurvivesUnpublishUnstageAndStagingAgain() throws IOException {
        VolumeCapability cap = Csi.mount("xfs");
        String id = createVolume("lc-xfs", cap, 300 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("target");
        stageAndPublish(id, staging, target, cap);
        byte[] data = randomBytes(1 << 20, 1);
        Files.write(target.resolve("data.bin"), data, StandardOpenOption.CREATE_NEW, StandardOpenOption.SYNC);

        NodeGetVolumeStatsResponse stats = csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(id).setVolumePath(target.toString()).build());
        assertFalse(stats.getVolumeCondition().getAbnormal(), stats.getVolumeCondition().getMessage());
        VolumeUsage bytes = stats.getUsageList().stream().filter(u -> u.getUnit() == VolumeUsage.Unit.BYTES).findFirst().orElseThrow();
        // xfs keeps ~64 MiB of a 300 MiB device for its log and metadata
        assertTrue(bytes.getTotal() > 200 * Csi.MIB && bytes.getTotal() <= 300 * Csi.MIB, "fs size " + bytes.getTotal());
        assertTrue(bytes.getUsed() >= 1 << 20, "used " + bytes.getUsed());
        assertTrue(stats.getUsageList().stream().anyMatch(u -> u.getUnit() == VolumeUsage.Unit.INODES && u.getTotal() > 0));

        unpublishAndUnstage(id, staging, target);
        assertFalse(isMountPoint(staging));
        assertTrue(KernelCleanup.loopDevicesUnder(StandaloneDriverResource.dir()).isEmpty(), "unstage detaches the loop device");

        stageAndPublish(id, staging, target, cap);
        assertArrayEquals(data, Files.readAllBytes(target.resolve("data.bin")));
        unpublishAndUnstage(id, staging, target);

        csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertFalse(Files.exists(StandaloneDriverResource.dir().resolve("pool/volumes/" + id + ".img")));
        assertTrue(csi.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                .noneMatch(e -> e.getVolume().getVolumeId().equals(id)));
    }

    @Test
    void stageAndPublishAreIdempotent() throws IOException {
        VolumeCapability cap = Csi.mount("xfs");
        String id = createVolume("lc-idem", cap, 300 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("target");
        stage(id, staging, cap);
        stage(id, staging, cap);
        publish(id, staging, target, cap, false);
        publish(id, staging, target, cap, false);
        assertEquals(1, KernelCleanup.loopDevicesUnder(StandaloneDriverResource.dir()).size(), "one loop device per backing file");
        long mounts = MountTable.read().entries().stream().filter(e -> e.mountPoint().startsWith(mnt.toString())).count();
        assertEquals(2, mounts, "one staging mount and one bind mount");
        assertCode(io.grpc.Status.Code.FAILED_PRECONDITION, () -> unstage(id, staging));
        unpublish(id, target);
        unpublish(id, target);
        assertFalse(Files.exists(target), "unpublish removes the target");
        unstage(id, staging);
        unstage(id, staging);
    }

    @Test
    void readOnlyPublishRefusesWrites() throws IOException {
        VolumeCapability cap = Csi.mount("xfs");
        String id = createVolume("lc-ro", cap, 300 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("target");
        stage(id, staging, cap);
        publish(id, staging, target, cap, true);
        assertThrows(IOException.class, () -> Files.writeString(target.resolve("x"), "no"));
        // asking for the same target read-write is a conflict, not a silent success
        assertCode(io.grpc.Status.Code.ALREADY_EXISTS, () -> publish(id, staging, target, cap, false));
        unpublishAndUnstage(id, staging, target);
    }

    @Test
    void blockDataSurvivesUnstageAndStagingAgain() throws IOException {
        VolumeCapability cap = Csi.block();
        String id = createVolume("lc-block", cap, 64 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("dev/target");
        stageAndPublish(id, staging, target, cap);
        assertTrue(Files.isRegularFile(target) || !Files.isDirectory(target));
        byte[] data = randomBytes(1 << 20, 2);
        writeAt(target, 5 * Csi.MIB, data);
        unpublishAndUnstage(id, staging, target);
        assertTrue(KernelCleanup.loopDevicesUnder(StandaloneDriverResource.dir()).isEmpty());

        stageAndPublish(id, staging, target, cap);
        assertArrayEquals(data, readAt(target, 5 * Csi.MIB, data.length));
        NodeGetVolumeStatsResponse stats = csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(id).setVolumePath(target.toString()).build());
        assertEquals(64 * Csi.MIB, stats.getUsage(0).getTotal());
        unpublishAndUnstage(id, staging, target);
    }

    @Test
    void onlineExpansionGrowsTheMountedFilesystemWithDataIntact() throws IOException {
        VolumeCapability cap = Csi.mount("xfs");
        String id = createVolume("lc-expand", cap, 300 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("target");
        stageAndPublish(id, staging, target, cap);
        byte[] data = randomBytes(256 << 10, 3);
        Files.write(target.resolve("keep.bin"), data, StandardOpenOption.CREATE_NEW, StandardOpenOption.SYNC);
        long before = Files.getFileStore(target).getTotalSpace();

        ControllerExpandVolumeResponse grown = csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(id).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(700 * Csi.MIB)).build());
        assertEquals(700 * Csi.MIB, grown.getCapacityBytes());
        assertTrue(grown.getNodeExpansionRequired());
        long nodeSize = csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(700 * Csi.MIB)).build())
                .getCapacityBytes();
        assertEquals(700 * Csi.MIB, nodeSize);
        long after = Files.getFileStore(target).getTotalSpace();
        assertTrue(after > before + 350 * Csi.MIB, "filesystem grew from " + before + " to " + after);
        assertArrayEquals(data, Files.readAllBytes(target.resolve("keep.bin")));
        // repeating either call changes nothing
        assertEquals(700 * Csi.MIB, csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(id).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(500 * Csi.MIB)).build()).getCapacityBytes());
        assertEquals(700 * Csi.MIB, csi.controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                .getVolume().getCapacityBytes());
        unpublishAndUnstage(id, staging, target);
    }

    @Test
    void snapshotOfAPublishedVolumeRestoresIdenticalContentBesideItsSource() throws IOException {
        VolumeCapability cap = Csi.mount("xfs");
        String src = createVolume("lc-snap-src", cap, 300 * Csi.MIB);
        Path staging = mnt.resolve("s1");
        Path target = mnt.resolve("t1");
        stageAndPublish(src, staging, target, cap);
        byte[] data = randomBytes(512 << 10, 4);
        Files.write(target.resolve("snap.bin"), data, StandardOpenOption.CREATE_NEW);

        Snapshot snap = csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("lc-snap").setSourceVolumeId(src).build())
                .getSnapshot();
        snapshots.add(snap.getSnapshotId());
        assertTrue(snap.getReadyToUse());
        assertEquals(src, snap.getSourceVolumeId());
        assertEquals(300 * Csi.MIB, snap.getSizeBytes());
        assertEquals(snap.getSnapshotId(), csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("lc-snap")
                .setSourceVolumeId(src).build()).getSnapshot().getSnapshotId(), "same name, same snapshot");
        Files.writeString(target.resolve("after-snapshot.txt"), "not in the snapshot");

        CreateVolumeRequest restore = Csi.create("lc-restored", cap, 400 * Csi.MIB).toBuilder()
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap.getSnapshotId())))
                .build();
        var restored = csi.controller.createVolume(restore).getVolume();
        volumes.add(restored.getVolumeId());
        assertEquals(snap.getSnapshotId(), restored.getContentSource().getSnapshot().getSnapshotId());
        Path staging2 = mnt.resolve("s2");
        Path target2 = mnt.resolve("t2");
        stageAndPublish(restored.getVolumeId(), staging2, target2, cap); // mounts beside its source: same xfs UUID, nouuid
        assertArrayEquals(data, Files.readAllBytes(target2.resolve("snap.bin")));
        assertFalse(Files.exists(target2.resolve("after-snapshot.txt")));
        assertTrue(Files.getFileStore(target2).getTotalSpace() > Files.getFileStore(target).getTotalSpace() + 80 * Csi.MIB,
                "the restored filesystem fills its larger volume");

        assertEquals(1, csi.controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(src).build()).getEntriesCount());
        unpublishAndUnstage(restored.getVolumeId(), staging2, target2);
        unpublishAndUnstage(src, staging, target);
    }

    @Test
    void cloneCopiesABlockVolume() throws IOException {
        VolumeCapability cap = Csi.block();
        String src = createVolume("lc-clone-src", cap, 32 * Csi.MIB);
        Path staging = mnt.resolve("s");
        Path target = mnt.resolve("t");
        stageAndPublish(src, staging, target, cap);
        byte[] data = randomBytes(64 << 10, 5);
        writeAt(target, 7 * Csi.MIB, data);
        unpublishAndUnstage(src, staging, target);

        var clone = csi.controller.createVolume(Csi.create("lc-clone", cap, 32 * Csi.MIB).toBuilder()
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(src)))
                .build()).getVolume();
        volumes.add(clone.getVolumeId());
        stageAndPublish(clone.getVolumeId(), staging, target, cap);
        assertArrayEquals(data, readAt(target, 7 * Csi.MIB, data.length));
        unpublishAndUnstage(clone.getVolumeId(), staging, target);
    }
}
