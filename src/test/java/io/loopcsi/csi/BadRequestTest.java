package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.util.List;

import org.junit.jupiter.api.Test;

import csi.v1.CapacityRange;
import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.ControllerPublishVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteSnapshotRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.NodeGetInfoRequest;
import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.VolumeCapability;
import csi.v1.VolumeContentSource;
import io.grpc.Status;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** Each class of bad input gets its precise status code, and the driver keeps serving. */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class BadRequestTest extends CsiTestBase {

    @Test
    void createVolumeArguments() {
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("", Csi.block(), Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("x".repeat(129), Csi.block(), Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("nul\0name", Csi.block(), Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(CreateVolumeRequest.newBuilder().setName("br-nocap").build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-btrfs", Csi.mount("btrfs"), Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-mnmw",
                Csi.mount("xfs").toBuilder().setAccessMode(Csi.mode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER)).build(),
                300 * Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-nomode",
                Csi.block().toBuilder().clearAccessMode().build(), Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-mixed", Csi.block(), Csi.MIB).toBuilder()
                .addVolumeCapabilities(Csi.mount("xfs")).build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-flags", Csi.mount("xfs", "ro,exec"), 300 * Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-loop", Csi.mount("xfs", "loop"), 300 * Csi.MIB)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-neg", Csi.block(), -1)));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("br-range", Csi.block(), 0).toBuilder()
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(10 * Csi.MIB).setLimitBytes(Csi.MIB)).build()));
        assertCode(Status.Code.OUT_OF_RANGE, () -> csi.controller.createVolume(Csi.create("br-huge", Csi.block(), Long.MAX_VALUE)));
        assertCode(Status.Code.NOT_FOUND, () -> csi.controller.createVolume(Csi.create("br-nosnap", Csi.block(), Csi.MIB).toBuilder()
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId("snap-../../etc"))).build()));
        assertCode(Status.Code.NOT_FOUND, () -> csi.controller.createVolume(Csi.create("br-novol", Csi.block(), Csi.MIB).toBuilder()
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId("vol-0123456789abcdef0123456789abcdef"))).build()));
    }

    @Test
    void idsThatCannotBeOursNameNothing() throws Exception {
        List<String> before = tree();
        for (String id : List.of("../../etc/passwd", "vol-/x", "VOL-0123456789ABCDEF0123456789ABCDEF", "vol-..", "/abs")) {
            csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()); // cannot exist: success
            csi.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build());
            assertCode(Status.Code.NOT_FOUND, () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(mnt.resolve("s").toString()).setVolumeCapability(Csi.block()).build()));
            assertCode(Status.Code.NOT_FOUND, () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                    .setVolumeId(id).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(Csi.MIB)).build()));
            assertCode(Status.Code.NOT_FOUND, () -> csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("br-s")
                    .setSourceVolumeId(id).build()));
        }
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("v".repeat(10_000)).build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("vol-\0").build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.deleteVolume(DeleteVolumeRequest.getDefaultInstance()));
        assertEquals(before, tree(), "bad requests changed nothing in the pool");
    }

    @Test
    void nodeArguments() {
        String id = createVolume("br-node", Csi.mount("xfs"), 300 * Csi.MIB);
        for (String path : List.of("relative/path", "/a/../b", "/a/./b", "")) {
            assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(path).setVolumeCapability(Csi.mount("xfs")).build()));
        }
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(mnt.resolve("s").toString()).build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> stage(id, mnt.resolve("s"), Csi.block()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> stage(id, mnt.resolve("s"), Csi.mount("ext4")));
        assertCode(Status.Code.FAILED_PRECONDITION, () -> publish(id, mnt.resolve("s"), mnt.resolve("t"), Csi.mount("xfs"), false));
        assertCode(Status.Code.NOT_FOUND, () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id)
                .setVolumePath(mnt.resolve("nowhere").toString()).build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(id).build()));
        assertCode(Status.Code.UNIMPLEMENTED, () -> csi.controller.controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(id).setNodeId("test-node").build()));
        assertEquals("test-node", csi.node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()).getNodeId());
    }

    private static List<String> tree() throws Exception {
        try (var s = Files.walk(StandaloneDriverResource.dir().resolve("pool"))) {
            return s.map(Object::toString).sorted().toList();
        }
    }
}
