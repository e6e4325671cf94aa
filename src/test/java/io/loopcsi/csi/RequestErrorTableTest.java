package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;

import com.google.protobuf.Descriptors;

import csi.v1.CapacityRange;
import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.ControllerGetCapabilitiesRequest;
import csi.v1.ControllerGetVolumeRequest;
import csi.v1.ControllerModifyVolumeRequest;
import csi.v1.ControllerPublishVolumeRequest;
import csi.v1.ControllerUnpublishVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeGroupSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteVolumeGroupSnapshotRequest;
import csi.v1.GetVolumeGroupSnapshotRequest;
import csi.v1.GroupControllerGetCapabilitiesRequest;
import csi.v1.DeleteSnapshotRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.GetPluginCapabilitiesRequest;
import csi.v1.GetPluginInfoRequest;
import csi.v1.ListSnapshotsRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.NodeExpandVolumeRequest;
import csi.v1.NodeGetCapabilitiesRequest;
import csi.v1.NodeGetInfoRequest;
import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.ProbeRequest;
import csi.v1.TopologyRequirement;
import csi.v1.ValidateVolumeCapabilitiesRequest;
import csi.v1.VolumeCapability;
import csi.v1.VolumeCapability.AccessMode.Mode;
import csi.v1.VolumeContentSource;
import io.grpc.Status.Code;
import io.grpc.StatusRuntimeException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The CSI spec's error tables as one table: for every field of every request message, what a
 * missing or bad value gets (INVALID_ARGUMENT for a missing REQUIRED field whatever the volume ID,
 * NOT_FOUND only after the fields are valid, the spec's code for each condition), and that an
 * OPTIONAL field the driver ignores is accepted. The test fails when a request field of
 * proto/csi.proto has no row, so a field added to the proto needs its rows.
 *
 * <p>csi-sanity (kubernetes-csi/csi-test v5.3.1) cannot run here; its negative cases are rows
 * marked "sanity:" with its exact inputs (IDs like {@code fake-vol-id-...}, the relative path
 * {@code some/path}), so what it asserts is asserted here too.
 */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class RequestErrorTableTest extends CsiTestBase {

    record Row(String field, String problem, Code expected, Callable<?> call) {
    }

    static final String FAKE_VOL = "fake-vol-id-0123456789"; // the shape of csi-sanity's generated IDs
    static final String UNKNOWN_VOL = "vol-0123456789abcdef0123456789abcdef"; // well formed, no such volume
    static final long MIB = Csi.MIB;

    @Test
    void everyFieldOfEveryRequestGetsTheSpecsCode() throws Exception {
        String xfs = createVolume("table-xfs", Csi.mount("xfs"), 300 * MIB);
        String blk = createVolume("table-blk", Csi.block(), 8 * MIB);
        String pub = createVolume("table-pub", Csi.mount("xfs"), 300 * MIB);
        Path ps = mnt.resolve("pub-staging");
        Path pt = mnt.resolve("pub-target");
        stageAndPublish(pub, ps, pt, Csi.mount("xfs"));
        String s = mnt.resolve("s").toString();
        String t = mnt.resolve("t").toString();
        VolumeCapability single = Csi.mount("xfs").toBuilder().setAccessMode(Csi.mode(Mode.SINGLE_NODE_SINGLE_WRITER)).build();

        List<Row> rows = new ArrayList<>();
        // ---- Identity: no fields; always answered
        rows.add(new Row("GetPluginInfoRequest", "empty", Code.OK, () -> csi.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance())));
        rows.add(new Row("GetPluginCapabilitiesRequest", "empty", Code.OK,
                () -> csi.identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance())));
        rows.add(new Row("ProbeRequest", "empty", Code.OK, () -> csi.identity.probe(ProbeRequest.getDefaultInstance())));

        // ---- CreateVolume
        rows.add(new Row("CreateVolumeRequest.name", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(CreateVolumeRequest.getDefaultInstance())));
        rows.add(new Row("CreateVolumeRequest.name", "129 bytes", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("n".repeat(129), Csi.block(), MIB))));
        rows.add(new Row("CreateVolumeRequest.name", "control character", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("a\u0007b", Csi.block(), MIB))));
        rows.add(new Row("CreateVolumeRequest.volume_capabilities", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(CreateVolumeRequest.newBuilder().setName("table-nocap").build())));
        rows.add(new Row("CreateVolumeRequest.volume_capabilities", "no access mode", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-nomode", Csi.block().toBuilder().clearAccessMode().build(), MIB))));
        rows.add(new Row("CreateVolumeRequest.volume_capabilities", "MULTI_NODE_MULTI_WRITER", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-mnmw",
                        Csi.block().toBuilder().setAccessMode(Csi.mode(Mode.MULTI_NODE_MULTI_WRITER)).build(), MIB))));
        rows.add(new Row("CreateVolumeRequest.volume_capabilities", "fs_type btrfs", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-btrfs", Csi.mount("btrfs"), 300 * MIB))));
        rows.add(new Row("CreateVolumeRequest.volume_capabilities", "block and mount", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-mix", Csi.block(), MIB).toBuilder().addVolumeCapabilities(Csi.mount("xfs")).build())));
        rows.add(new Row("CreateVolumeRequest.capacity_range", "negative required", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-neg", Csi.block(), -1))));
        rows.add(new Row("CreateVolumeRequest.capacity_range", "required > limit, before the source lookup", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-range", Csi.block(), 0).toBuilder().setCapacityRange(range(10 * MIB, MIB))
                        .setVolumeContentSource(snapshotSource("snap-0123456789abcdef0123456789abcdef")).build())));
        rows.add(new Row("CreateVolumeRequest.capacity_range", "above the largest volume", Code.OUT_OF_RANGE,
                () -> csi.controller.createVolume(Csi.create("table-huge", Csi.block(), Long.MAX_VALUE))));
        rows.add(new Row("CreateVolumeRequest.parameters", "over 4 KiB", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-params", Csi.block(), MIB).toBuilder().putParameters("k", "v".repeat(5000)).build())));
        rows.add(new Row("CreateVolumeRequest.secrets", "ignored: same request again", Code.OK,
                () -> csi.controller.createVolume(Csi.create("table-blk", Csi.block(), 8 * MIB).toBuilder().putSecrets("k", "v").build())));
        rows.add(new Row("CreateVolumeRequest.volume_content_source", "no snapshot or volume", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-src", Csi.block(), MIB).toBuilder()
                        .setVolumeContentSource(VolumeContentSource.getDefaultInstance()).build())));
        rows.add(new Row("CreateVolumeRequest.volume_content_source", "sanity: snapshot not found", Code.NOT_FOUND,
                () -> csi.controller.createVolume(Csi.create("table-src", Csi.block(), MIB).toBuilder()
                        .setVolumeContentSource(snapshotSource("non-existing-snapshot-id")).build())));
        rows.add(new Row("CreateVolumeRequest.volume_content_source", "sanity: volume not found", Code.NOT_FOUND,
                () -> csi.controller.createVolume(Csi.create("table-src", Csi.block(), MIB).toBuilder()
                        .setVolumeContentSource(volumeSource(FAKE_VOL)).build())));
        rows.add(new Row("CreateVolumeRequest.volume_content_source", "source of another mode", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-src", Csi.block(), 300 * MIB).toBuilder()
                        .setVolumeContentSource(volumeSource(xfs)).build())));
        rows.add(new Row("CreateVolumeRequest.accessibility_requirements", "requisite excludes this node", Code.RESOURCE_EXHAUSTED,
                () -> csi.controller.createVolume(Csi.create("table-topo", Csi.block(), MIB).toBuilder()
                        .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(CsiTypes.topology("other-node"))).build())));
        rows.add(new Row("CreateVolumeRequest.mutable_params", "unknown key", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-mut", Csi.block(), MIB).toBuilder().putMutableParams("XXX_FakeKey", "v").build())));
        rows.add(new Row("CreateVolumeRequest.mutable_params", "unknown value", Code.INVALID_ARGUMENT,
                () -> csi.controller.createVolume(Csi.create("table-mut", Csi.block(), MIB).toBuilder()
                        .putMutableParams(MutableParameters.PROVISIONING, "thicker").build())));
        rows.add(new Row("CreateVolumeRequest.mutable_params", "provisioning=thick, directIO=off", Code.OK,
                () -> csi.controller.createVolume(Csi.create("table-mut", Csi.block(), MIB).toBuilder()
                        .putMutableParams(MutableParameters.PROVISIONING, "thick").putMutableParams(MutableParameters.DIRECT_IO, "off").build())));
        rows.add(new Row("CreateVolumeRequest.name", "same name, other size", Code.ALREADY_EXISTS,
                () -> csi.controller.createVolume(Csi.create("table-blk", Csi.block(), 16 * MIB))));

        // ---- DeleteVolume
        rows.add(new Row("DeleteVolumeRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.deleteVolume(DeleteVolumeRequest.getDefaultInstance())));
        rows.add(new Row("DeleteVolumeRequest.volume_id", "sanity: not ours, deleting it succeeds", Code.OK,
                () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("fake-vol-id").build())));
        rows.add(new Row("DeleteVolumeRequest.volume_id", "10 KB", Code.INVALID_ARGUMENT,
                () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("v".repeat(10_240)).build())));
        rows.add(new Row("DeleteVolumeRequest.volume_id", "staged: in use", Code.FAILED_PRECONDITION,
                () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(pub).build())));
        rows.add(new Row("DeleteVolumeRequest.secrets", "ignored", Code.OK,
                () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).putSecrets("k", "v").build())));

        // ---- ControllerPublish/Unpublish: no PUBLISH_UNPUBLISH_VOLUME capability, whatever the fields
        for (String f : List.of("volume_id", "node_id", "volume_capability", "readonly", "secrets", "volume_context")) {
            rows.add(new Row("ControllerPublishVolumeRequest." + f, "not offered", Code.UNIMPLEMENTED,
                    () -> csi.controller.controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(xfs).setNodeId("test-node")
                            .setVolumeCapability(Csi.mount("xfs")).build())));
        }
        for (String f : List.of("volume_id", "node_id", "secrets")) {
            rows.add(new Row("ControllerUnpublishVolumeRequest." + f, "not offered", Code.UNIMPLEMENTED,
                    () -> csi.controller.controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(xfs).build())));
        }

        // ---- ValidateVolumeCapabilities
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.getDefaultInstance())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.volume_id", "sanity: not found", Code.NOT_FOUND,
                () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(FAKE_VOL)
                        .addVolumeCapabilities(Csi.mount("")).build())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.volume_capabilities", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs).build())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.volume_capabilities", "block on an xfs volume: not confirmed", Code.OK,
                () -> notConfirmed(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs).addVolumeCapabilities(Csi.block()).build())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.volume_context", "echoed", Code.OK,
                () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs)
                        .addVolumeCapabilities(Csi.mount("xfs")).putVolumeContext("k", "v").putParameters("p", "v").putSecrets("s", "v").build())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.parameters", "echoed", Code.OK,
                () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs)
                        .addVolumeCapabilities(Csi.mount("xfs")).putParameters("p", "v").build())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.secrets", "ignored", Code.OK,
                () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs)
                        .addVolumeCapabilities(Csi.mount("xfs")).putSecrets("s", "v").build())));
        rows.add(new Row("ValidateVolumeCapabilitiesRequest.mutable_params", "unknown key: not confirmed", Code.OK,
                () -> notConfirmed(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs).addVolumeCapabilities(Csi.mount("xfs"))
                        .putMutableParams("XXX_FakeKey", "v").build())));

        // ---- ListVolumes, GetVolume, GetCapacity, GetCapabilities, ModifyVolume
        rows.add(new Row("ListVolumesRequest.starting_token", "sanity: invalid-token", Code.ABORTED,
                () -> csi.controller.listVolumes(ListVolumesRequest.newBuilder().setStartingToken("invalid-token").build())));
        rows.add(new Row("ListVolumesRequest.max_entries", "negative", Code.INVALID_ARGUMENT,
                () -> csi.controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(-1).build())));
        rows.add(new Row("ControllerGetVolumeRequest.volume_id", "missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerGetVolume(ControllerGetVolumeRequest.getDefaultInstance())));
        rows.add(new Row("ControllerGetVolumeRequest.volume_id", "not found", Code.NOT_FOUND,
                () -> csi.controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).build())));
        rows.add(new Row("GetCapacityRequest.volume_capabilities", "fs_type zfs: no such volume can be made, 0 bytes", Code.OK,
                () -> zeroCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(Csi.mount("zfs")).build())));
        rows.add(new Row("GetCapacityRequest.volume_capabilities", "csi-provisioner v2.1: mount, no fs_type, access mode UNKNOWN",
                Code.OK, () -> someCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(Csi.mount("").toBuilder()
                        .setAccessMode(Csi.mode(Mode.UNKNOWN))).build())));
        rows.add(new Row("GetCapacityRequest.volume_capabilities", "csi-provisioner v3+: none", Code.OK,
                () -> someCapacity(GetCapacityRequest.getDefaultInstance())));
        rows.add(new Row("GetCapacityRequest.volume_capabilities", "no access type (the spec's MUST)", Code.INVALID_ARGUMENT,
                () -> csi.controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(VolumeCapability.newBuilder()
                        .setAccessMode(Csi.mode(Mode.SINGLE_NODE_WRITER))).build())));
        rows.add(new Row("GetCapacityRequest.volume_capabilities", "MULTI_NODE_MULTI_WRITER: 0 bytes", Code.OK,
                () -> zeroCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(Csi.block().toBuilder()
                        .setAccessMode(Csi.mode(Mode.MULTI_NODE_MULTI_WRITER))).build())));
        rows.add(new Row("GetCapacityRequest.parameters", "ignored", Code.OK,
                () -> csi.controller.getCapacity(GetCapacityRequest.newBuilder().putParameters("k", "v").build())));
        rows.add(new Row("GetCapacityRequest.accessible_topology", "another node: 0 bytes", Code.OK,
                () -> zeroCapacity(GetCapacityRequest.newBuilder().setAccessibleTopology(CsiTypes.topology("other-node")).build())));
        rows.add(new Row("ControllerGetCapabilitiesRequest", "empty", Code.OK,
                () -> csi.controller.controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance())));
        rows.add(new Row("ControllerModifyVolumeRequest.volume_id", "missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder()
                        .putMutableParameters(MutableParameters.PROVISIONING, "thin").build())));
        rows.add(new Row("ControllerModifyVolumeRequest.volume_id", "sanity: not found", Code.NOT_FOUND,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(FAKE_VOL)
                        .putMutableParameters(MutableParameters.PROVISIONING, "thin").build())));
        rows.add(new Row("ControllerModifyVolumeRequest.volume_id", "well formed, not found", Code.NOT_FOUND,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL)
                        .putMutableParameters(MutableParameters.PROVISIONING, "thin").build())));
        rows.add(new Row("ControllerModifyVolumeRequest.mutable_parameters", "sanity: empty, nothing to change", Code.OK,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(blk).build())));
        rows.add(new Row("ControllerModifyVolumeRequest.mutable_parameters", "sanity: empty, volume not found", Code.NOT_FOUND,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).build())));
        rows.add(new Row("ControllerModifyVolumeRequest.mutable_parameters", "empty, well formed ID not found", Code.NOT_FOUND,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).build())));
        rows.add(new Row("ControllerModifyVolumeRequest.mutable_parameters", "unknown key, whatever the volume", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL)
                        .putMutableParameters("iops", "3000").build())));
        rows.add(new Row("ControllerModifyVolumeRequest.mutable_parameters", "unknown value", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(blk)
                        .putMutableParameters(MutableParameters.DIRECT_IO, "sometimes").build())));
        rows.add(new Row("ControllerModifyVolumeRequest.mutable_parameters", "over 4 KiB", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(blk)
                        .putMutableParameters(MutableParameters.PROVISIONING, "x".repeat(5000)).build())));
        rows.add(new Row("ControllerModifyVolumeRequest.secrets", "ignored; the value it has already", Code.OK,
                () -> csi.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(blk)
                        .putMutableParameters(MutableParameters.PROVISIONING, "thin").putSecrets("k", "v").build())));

        // ---- GroupController
        String group = Ids.groupSnapshotIdFor("table-group");
        rows.add(new Row("GroupControllerGetCapabilitiesRequest", "empty", Code.OK,
                () -> csi.group.groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest.getDefaultInstance())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.name", "missing", Code.INVALID_ARGUMENT,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().addSourceVolumeIds(blk).build())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.source_volume_ids", "missing", Code.INVALID_ARGUMENT,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("table-group").build())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.source_volume_ids", "listed twice", Code.INVALID_ARGUMENT,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("table-group")
                        .addSourceVolumeIds(blk).addSourceVolumeIds(blk).build())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.source_volume_ids", "sanity-style: not found", Code.NOT_FOUND,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("table-group")
                        .addSourceVolumeIds(blk).addSourceVolumeIds(FAKE_VOL).build())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.parameters", "over 4 KiB", Code.INVALID_ARGUMENT,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("table-group")
                        .addSourceVolumeIds(blk).putParameters("k", "x".repeat(5000)).build())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.secrets", "ignored", Code.OK,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("table-group")
                        .addSourceVolumeIds(blk).putSecrets("k", "v").putParameters("k", "v").build())));
        rows.add(new Row("CreateVolumeGroupSnapshotRequest.name", "same name, other volumes", Code.ALREADY_EXISTS,
                () -> csi.group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("table-group")
                        .addSourceVolumeIds(blk).addSourceVolumeIds(xfs).build())));
        String member = Ids.memberSnapshotIdFor("table-group", blk);
        rows.add(new Row("GetVolumeGroupSnapshotRequest.group_snapshot_id", "missing", Code.INVALID_ARGUMENT,
                () -> csi.group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().addSnapshotIds(member).build())));
        rows.add(new Row("GetVolumeGroupSnapshotRequest.snapshot_ids", "missing: the driver knows the members", Code.OK,
                () -> csi.group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group).build())));
        rows.add(new Row("GetVolumeGroupSnapshotRequest.group_snapshot_id", "sanity: unknown ID, no snapshot_ids", Code.NOT_FOUND,
                () -> csi.group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(FAKE_VOL).build())));
        rows.add(new Row("GetVolumeGroupSnapshotRequest.snapshot_ids", "not the group's members", Code.INVALID_ARGUMENT,
                () -> csi.group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group)
                        .addSnapshotIds(member).addSnapshotIds(Ids.snapshotIdFor("table-snap")).build())));
        rows.add(new Row("GetVolumeGroupSnapshotRequest.group_snapshot_id", "not found", Code.NOT_FOUND,
                () -> csi.group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(FAKE_VOL)
                        .addSnapshotIds(member).build())));
        rows.add(new Row("GetVolumeGroupSnapshotRequest.secrets", "ignored", Code.OK,
                () -> csi.group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group)
                        .addSnapshotIds(member).putSecrets("k", "v").build())));
        rows.add(new Row("DeleteVolumeGroupSnapshotRequest.group_snapshot_id", "missing", Code.INVALID_ARGUMENT,
                () -> csi.group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().addSnapshotIds("s").build())));
        rows.add(new Row("DeleteVolumeGroupSnapshotRequest.snapshot_ids", "sanity: unknown ID, no snapshot_ids: deleted", Code.OK,
                () -> csi.group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(FAKE_VOL).build())));
        rows.add(new Row("DeleteVolumeGroupSnapshotRequest.snapshot_ids", "not the group's members", Code.INVALID_ARGUMENT,
                () -> csi.group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group)
                        .addSnapshotIds(Ids.snapshotIdFor("table-snap")).build())));
        rows.add(new Row("DeleteVolumeGroupSnapshotRequest.secrets", "unknown group: deleted", Code.OK,
                () -> csi.group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(FAKE_VOL)
                        .addSnapshotIds("s").putSecrets("k", "v").build())));

        // ---- Snapshots
        rows.add(new Row("CreateSnapshotRequest.name", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setSourceVolumeId("testId").build())));
        rows.add(new Row("CreateSnapshotRequest.source_volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("name").build())));
        rows.add(new Row("CreateSnapshotRequest.source_volume_id", "not found", Code.NOT_FOUND,
                () -> csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("table-snap").setSourceVolumeId(UNKNOWN_VOL).build())));
        rows.add(new Row("CreateSnapshotRequest.parameters", "over 4 KiB", Code.INVALID_ARGUMENT,
                () -> csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("table-snap").setSourceVolumeId(xfs)
                        .putParameters("k", "v".repeat(5000)).build())));
        rows.add(new Row("CreateSnapshotRequest.secrets", "ignored (the source is missing, so nothing is made)", Code.NOT_FOUND,
                () -> csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("table-snap").setSourceVolumeId(UNKNOWN_VOL)
                        .putSecrets("k", "v").build())));
        rows.add(new Row("DeleteSnapshotRequest.snapshot_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.deleteSnapshot(DeleteSnapshotRequest.getDefaultInstance())));
        rows.add(new Row("DeleteSnapshotRequest.snapshot_id", "sanity: not ours, deleting it succeeds", Code.OK,
                () -> csi.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId("reallyfakesnapshotid").build())));
        rows.add(new Row("DeleteSnapshotRequest.secrets", "ignored", Code.OK,
                () -> csi.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId("reallyfakesnapshotid").putSecrets("k", "v").build())));
        rows.add(new Row("ListSnapshotsRequest.starting_token", "not issued by us", Code.ABORTED,
                () -> csi.controller.listSnapshots(ListSnapshotsRequest.newBuilder().setStartingToken("invalid-token").build())));
        rows.add(new Row("ListSnapshotsRequest.max_entries", "negative", Code.INVALID_ARGUMENT,
                () -> csi.controller.listSnapshots(ListSnapshotsRequest.newBuilder().setMaxEntries(-1).build())));
        rows.add(new Row("ListSnapshotsRequest.snapshot_id", "sanity: none-exist-id: empty list", Code.OK,
                () -> emptyList(ListSnapshotsRequest.newBuilder().setSnapshotId("none-exist-id").build())));
        rows.add(new Row("ListSnapshotsRequest.source_volume_id", "sanity: unknown volume: empty list", Code.OK,
                () -> emptyList(ListSnapshotsRequest.newBuilder().setSourceVolumeId(FAKE_VOL).build())));
        rows.add(new Row("ListSnapshotsRequest.secrets", "ignored", Code.OK,
                () -> csi.controller.listSnapshots(ListSnapshotsRequest.newBuilder().putSecrets("k", "v").build())));

        // ---- ControllerExpandVolume
        rows.add(new Row("ControllerExpandVolumeRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setCapacityRange(range(MIB, 0)).build())));
        rows.add(new Row("ControllerExpandVolumeRequest.volume_id", "not found", Code.NOT_FOUND,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(FAKE_VOL)
                        .setCapacityRange(range(MIB, 0)).build())));
        rows.add(new Row("ControllerExpandVolumeRequest.capacity_range", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfs).build())));
        rows.add(new Row("ControllerExpandVolumeRequest.capacity_range", "negative, before the lookup", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL)
                        .setCapacityRange(range(-5, 0)).build())));
        rows.add(new Row("ControllerExpandVolumeRequest.capacity_range", "above limit: volumes never shrink", Code.OUT_OF_RANGE,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfs)
                        .setCapacityRange(range(0, 100 * MIB)).build())));
        rows.add(new Row("ControllerExpandVolumeRequest.volume_capability", "block for an xfs volume", Code.INVALID_ARGUMENT,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfs)
                        .setCapacityRange(range(300 * MIB, 0)).setVolumeCapability(Csi.block()).build())));
        rows.add(new Row("ControllerExpandVolumeRequest.secrets", "ignored: already that large", Code.OK,
                () -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfs)
                        .setCapacityRange(range(300 * MIB, 0)).putSecrets("k", "v").build())));

        // ---- NodeStageVolume: fields first, whatever the volume ID
        rows.add(new Row("NodeStageVolumeRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setStagingTargetPath(s).setVolumeCapability(Csi.mount(""))
                        .putPublishContext("device", "/dev/mock").build())));
        rows.add(new Row("NodeStageVolumeRequest.staging_target_path", "sanity: missing, unknown volume", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).setVolumeCapability(Csi.mount(""))
                        .putPublishContext("device", "/dev/mock").build())));
        rows.add(new Row("NodeStageVolumeRequest.staging_target_path", "relative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath("some/path")
                        .setVolumeCapability(Csi.mount("xfs")).build())));
        rows.add(new Row("NodeStageVolumeRequest.volume_capability", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(s).build())));
        rows.add(new Row("NodeStageVolumeRequest.volume_capability", "missing, unknown volume", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).setStagingTargetPath(s).build())));
        rows.add(new Row("NodeStageVolumeRequest.volume_capability", "block for an xfs volume: exceeds capabilities", Code.FAILED_PRECONDITION,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(s)
                        .setVolumeCapability(Csi.block()).build())));
        rows.add(new Row("NodeStageVolumeRequest.volume_id", "not found", Code.NOT_FOUND,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).setStagingTargetPath(s)
                        .setVolumeCapability(Csi.block()).build())));
        rows.add(new Row("NodeStageVolumeRequest.publish_context", "ignored: already staged there", Code.OK,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(pub).setStagingTargetPath(ps.toString())
                        .setVolumeCapability(Csi.mount("xfs")).putPublishContext("device", "/dev/mock").putSecrets("k", "v")
                        .putVolumeContext("k", "v").build())));
        rows.add(new Row("NodeStageVolumeRequest.secrets", "ignored", Code.OK,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(pub).setStagingTargetPath(ps.toString())
                        .setVolumeCapability(Csi.mount("xfs")).putSecrets("k", "v").build())));
        rows.add(new Row("NodeStageVolumeRequest.volume_context", "ignored", Code.OK,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(pub).setStagingTargetPath(ps.toString())
                        .setVolumeCapability(Csi.mount("xfs")).putVolumeContext("k", "v").build())));

        // ---- NodeUnstageVolume
        rows.add(new Row("NodeUnstageVolumeRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setStagingTargetPath(s).build())));
        rows.add(new Row("NodeUnstageVolumeRequest.volume_id", "not found", Code.NOT_FOUND,
                () -> csi.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).setStagingTargetPath(s).build())));
        rows.add(new Row("NodeUnstageVolumeRequest.staging_target_path", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).build())));
        rows.add(new Row("NodeUnstageVolumeRequest.staging_target_path", "relative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath("some/path").build())));
        rows.add(new Row("NodeUnstageVolumeRequest.volume_id", "still published", Code.FAILED_PRECONDITION,
                () -> csi.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(pub).setStagingTargetPath(ps.toString()).build())));

        // ---- NodePublishVolume
        rows.add(new Row("NodePublishVolumeRequest.volume_id", "sanity: missing (nothing set)", Code.INVALID_ARGUMENT,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.getDefaultInstance())));
        rows.add(new Row("NodePublishVolumeRequest.target_path", "sanity: missing, unknown volume", Code.INVALID_ARGUMENT,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).build())));
        rows.add(new Row("NodePublishVolumeRequest.target_path", "relative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath("some/path")
                        .setStagingTargetPath(ps.toString()).setVolumeCapability(Csi.mount("xfs")).build())));
        rows.add(new Row("NodePublishVolumeRequest.volume_capability", "sanity: missing, unknown volume, no staging path", Code.INVALID_ARGUMENT,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).setTargetPath(t).build())));
        rows.add(new Row("NodePublishVolumeRequest.staging_target_path", "not set: stage first", Code.FAILED_PRECONDITION,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath(t)
                        .setVolumeCapability(Csi.mount("xfs")).build())));
        rows.add(new Row("NodePublishVolumeRequest.staging_target_path", "not staged there", Code.FAILED_PRECONDITION,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(xfs).setTargetPath(t).setStagingTargetPath(s)
                        .setVolumeCapability(Csi.mount("xfs")).build())));
        rows.add(new Row("NodePublishVolumeRequest.volume_id", "not found", Code.NOT_FOUND,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).setTargetPath(t)
                        .setStagingTargetPath(s).setVolumeCapability(Csi.mount("xfs")).build())));
        rows.add(new Row("NodePublishVolumeRequest.volume_capability", "ext4 for an xfs volume: exceeds capabilities", Code.FAILED_PRECONDITION,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath(t)
                        .setStagingTargetPath(ps.toString()).setVolumeCapability(Csi.mount("ext4")).build())));
        rows.add(new Row("NodePublishVolumeRequest.volume_capability", "SINGLE_NODE_SINGLE_WRITER, published elsewhere", Code.FAILED_PRECONDITION,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath(t)
                        .setStagingTargetPath(ps.toString()).setVolumeCapability(single).build())));
        rows.add(new Row("NodePublishVolumeRequest.readonly", "published read-write, asked read-only", Code.ALREADY_EXISTS,
                () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath(pt.toString())
                        .setStagingTargetPath(ps.toString()).setVolumeCapability(Csi.mount("xfs")).setReadonly(true).build())));
        for (String f : List.of("publish_context", "secrets", "volume_context")) {
            rows.add(new Row("NodePublishVolumeRequest." + f, "ignored: already published there", Code.OK,
                    () -> csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath(pt.toString())
                            .setStagingTargetPath(ps.toString()).setVolumeCapability(Csi.mount("xfs")).putPublishContext("k", "v")
                            .putSecrets("k", "v").putVolumeContext("k", "v").build())));
        }

        // ---- NodeUnpublishVolume
        rows.add(new Row("NodeUnpublishVolumeRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.getDefaultInstance())));
        rows.add(new Row("NodeUnpublishVolumeRequest.target_path", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).build())));
        rows.add(new Row("NodeUnpublishVolumeRequest.target_path", "relative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(pub).setTargetPath("some/path").build())));
        rows.add(new Row("NodeUnpublishVolumeRequest.volume_id", "not found", Code.NOT_FOUND,
                () -> csi.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(UNKNOWN_VOL).setTargetPath(t).build())));

        // ---- NodeGetVolumeStats
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumePath("some/path").build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_path", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(FAKE_VOL).build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_id", "sanity: not found (some/path)", Code.NOT_FOUND,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(FAKE_VOL).setVolumePath("some/path").build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_id", "well formed, not found", Code.NOT_FOUND,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(UNKNOWN_VOL).setVolumePath(pt.toString()).build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_path", "sanity: published volume, some/path", Code.NOT_FOUND,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(pub).setVolumePath("some/path").build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_path", "published volume, a directory that is not its mount", Code.NOT_FOUND,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(pub).setVolumePath(mnt.toString()).build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_path", "unstaged volume", Code.NOT_FOUND,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(xfs).setVolumePath(mnt.toString()).build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.volume_path", "outside --allowed-roots", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(pub).setVolumePath("/etc").build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.staging_target_path", "relative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setStagingTargetPath("some/path").build())));
        rows.add(new Row("NodeGetVolumeStatsRequest.staging_target_path", "given, published path: usage", Code.OK,
                () -> csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setStagingTargetPath(ps.toString()).build())));

        // ---- NodeExpandVolume
        rows.add(new Row("NodeExpandVolumeRequest.volume_id", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumePath(mnt.toString())
                        .setVolumeCapability(Csi.mount("")).build())));
        rows.add(new Row("NodeExpandVolumeRequest.volume_path", "sanity: missing", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(xfs).setVolumeCapability(Csi.mount("")).build())));
        rows.add(new Row("NodeExpandVolumeRequest.volume_id", "sanity: not found (some/path)", Code.NOT_FOUND,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(FAKE_VOL).setVolumePath("some/path").build())));
        rows.add(new Row("NodeExpandVolumeRequest.volume_path", "published volume, some/path", Code.NOT_FOUND,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath("some/path").build())));
        rows.add(new Row("NodeExpandVolumeRequest.volume_path", "not its mount", Code.NOT_FOUND,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath(mnt.toString()).build())));
        rows.add(new Row("NodeExpandVolumeRequest.capacity_range", "negative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setCapacityRange(range(-1, 0)).build())));
        rows.add(new Row("NodeExpandVolumeRequest.capacity_range", "more than the controller granted", Code.OUT_OF_RANGE,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setCapacityRange(range(1L << 40, 0)).build())));
        rows.add(new Row("NodeExpandVolumeRequest.volume_capability", "block for an xfs volume: exceeds capabilities", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setVolumeCapability(Csi.block()).build())));
        rows.add(new Row("NodeExpandVolumeRequest.staging_target_path", "relative", Code.INVALID_ARGUMENT,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setStagingTargetPath("some/path").build())));
        rows.add(new Row("NodeExpandVolumeRequest.secrets", "ignored: nothing to grow", Code.OK,
                () -> csi.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(pub).setVolumePath(pt.toString())
                        .setStagingTargetPath(ps.toString()).putSecrets("k", "v").build())));

        rows.add(new Row("NodeGetCapabilitiesRequest", "empty", Code.OK, () -> csi.node.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance())));
        rows.add(new Row("NodeGetInfoRequest", "empty", Code.OK, () -> csi.node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance())));
        rows.add(new Row("NodeStageVolumeRequest.volume_capability", "block volume staged as mount", Code.FAILED_PRECONDITION,
                () -> csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(blk).setStagingTargetPath(s)
                        .setVolumeCapability(Csi.mount("xfs")).build())));

        List<String> wrong = new ArrayList<>();
        for (Row r : rows) {
            Code got;
            try {
                r.call().call();
                got = Code.OK;
            } catch (StatusRuntimeException e) {
                got = e.getStatus().getCode();
                if (got != r.expected()) {
                    wrong.add(r.field() + " (" + r.problem() + "): " + e.getStatus() + ", expected " + r.expected());
                }
                continue;
            }
            if (got != r.expected()) {
                wrong.add(r.field() + " (" + r.problem() + "): OK, expected " + r.expected());
            }
        }
        assertEquals(List.of(), wrong, wrong.size() + " of " + rows.size() + " rows answered wrongly");

        Set<String> covered = new TreeSet<>();
        rows.forEach(r -> covered.add(r.field()));
        Set<String> missing = new TreeSet<>(requestFields());
        missing.removeAll(covered);
        assertEquals(Set.of(), missing, "request fields of proto/csi.proto without a row");
        assertTrue(isMountPoint(pt), "the published volume stayed published");
        System.out.println("error table: " + rows.size() + " rows over " + covered.size() + " request fields, each answered as the spec says");
    }

    /** "Message.field" of every field of every request message, and "Message" for those without fields. */
    private static Set<String> requestFields() {
        Set<String> all = new TreeSet<>();
        for (Descriptors.Descriptor m : CreateVolumeRequest.getDescriptor().getFile().getMessageTypes()) {
            if (!m.getName().endsWith("Request")) {
                continue;
            }
            if (m.getFields().isEmpty()) {
                all.add(m.getName());
            }
            m.getFields().forEach(f -> all.add(m.getName() + "." + f.getName()));
        }
        return all;
    }

    private static Object notConfirmed(ValidateVolumeCapabilitiesRequest req) {
        var r = csi.controller.validateVolumeCapabilities(req);
        assertTrue(!r.hasConfirmed() && !r.getMessage().isEmpty(), "not confirmed, with a reason: " + r);
        return r;
    }

    private static Object zeroCapacity(GetCapacityRequest req) {
        var r = csi.controller.getCapacity(req);
        assertEquals(0, r.getAvailableCapacity(), r.toString());
        return r;
    }

    private static Object someCapacity(GetCapacityRequest req) {
        var r = csi.controller.getCapacity(req);
        assertTrue(r.getAvailableCapacity() > 0 && r.hasMaximumVolumeSize(), "capacity a provisioner can publish: " + r);
        return r;
    }

    private static Object emptyList(ListSnapshotsRequest req) {
        var r = csi.controller.listSnapshots(req);
        assertEquals(0, r.getEntriesCount(), r.toString());
        return r;
    }

    private static CapacityRange range(long required, long limit) {
        return CapacityRange.newBuilder().setRequiredBytes(required).setLimitBytes(limit).build();
    }

    private static VolumeContentSource snapshotSource(String id) {
        return VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(id)).build();
    }

    private static VolumeContentSource volumeSource(String id) {
        return VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id)).build();
    }
}
