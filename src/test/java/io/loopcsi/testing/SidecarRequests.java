package io.loopcsi.testing;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import csi.v1.CapacityRange;
import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.ControllerModifyVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeGroupSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteSnapshotRequest;
import csi.v1.DeleteVolumeGroupSnapshotRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.GetVolumeGroupSnapshotRequest;
import csi.v1.ListSnapshotsRequest;
import csi.v1.Topology;
import csi.v1.TopologyRequirement;
import csi.v1.VolumeCapability;
import csi.v1.VolumeCapability.AccessMode.Mode;
import csi.v1.VolumeContentSource;

/**
 * The CSI requests of the real Kubernetes sidecars, built the way each release's source builds
 * them, for the tests that stand in for those programs (replays against the standalone driver and
 * the controller role, ProductOnNodeE2E). Every shape here is taken from the sidecar's source at
 * the release named, as read for issue 21 (docs/sidecars.md has the table and the files):
 *
 * <ul>
 * <li>GetCapacity: external-provisioner pkg/capacity/capacity.go, syncCapacity: parameters are the
 * StorageClass' parameters as they are (csi.storage.k8s.io/ keys included), accessible_topology the
 * segment (the driver's CSINode topology keys with the Node's label values); before v5.0 one
 * "faked" capability, mount with access mode UNKNOWN ("The standard makes it mandatory to pass
 * something, therefore we pick something rather arbitrarily"), from v5.0 none (PR #1193).</li>
 * <li>CreateVolume: pkg/controller/controller.go, prepareProvision: name pvc-UID, required_bytes
 * only, one capability per PVC access mode (fs_type from csi.storage.k8s.io/fstype, else
 * --default-fstype; mount_flags from the class' mountOptions), parameters with the
 * csi.storage.k8s.io/ keys removed plus --extra-create-metadata's three, with --strict-topology
 * requisite = preferred = the selected node's segment (pkg/controller/topology.go), the data
 * source, and from v5.3 with a VolumeAttributesClass its parameters as mutable_parameters.
 * Access modes: v2.1 maps ReadWriteOnce to SINGLE_NODE_WRITER; from v3.0 (csi-lib-utils
 * accessmodes, CHANGELOG-3.0 #630) to SINGLE_NODE_MULTI_WRITER when the driver has that
 * controller capability, ReadWriteOncePod to SINGLE_NODE_SINGLE_WRITER.</li>
 * <li>ControllerExpandVolume: external-resizer pkg/csi/client.go, Expand: required_bytes, always a
 * volume_capability (the PV's fsType and mountOptions, or block; its access mode mapped as
 * above).</li>
 * <li>ControllerModifyVolume: external-resizer pkg/modifycontroller/modify_volume.go: the target
 * VolumeAttributesClass' whole parameters every time, no secrets.</li>
 * <li>CreateSnapshot: external-snapshotter pkg/sidecar-controller/snapshot_controller.go
 * createSnapshotWrapper: name snapshot-UID (repeated until ready_to_use), the class' parameters
 * without csi.storage.k8s.io/ keys plus --extra-create-metadata's three; ListSnapshots with
 * snapshot_id only for pre-provisioned contents; group calls in pkg/group_snapshotter
 * (snapshot_ids sent to Get and Delete).</li>
 * </ul>
 */
public final class SidecarRequests {

    public static final String TOPOLOGY_KEY = "topology.loopcsi.io/node";

    /** csi-provisioner releases the operator deploys. */
    public enum Provisioner {
        V2_1_2, V3_1_1, V5_3_0, V6_3_0;

        /** Before v5.0 GetCapacity carries one mount capability with access mode UNKNOWN. */
        boolean fakesCapacityCapability() {
            return this == V2_1_2 || this == V3_1_1;
        }

        /** From v3.0 ReadWriteOnce becomes SINGLE_NODE_MULTI_WRITER for a driver that has that capability. */
        boolean mapsToMultiWriter() {
            return this != V2_1_2;
        }

        /** The VolumeAttributesClass' parameters go into CreateVolume (v5.3 with the gate, v6 by default). */
        boolean passesMutableParameters() {
            return this == V5_3_0 || this == V6_3_0;
        }
    }

    /** What csi-provisioner reads of a StorageClass. */
    public record StorageClass(Map<String, String> parameters, List<String> mountOptions) {
    }

    /** What csi-provisioner reads of a claim: its UID, name, namespace, size, access modes and volume mode. */
    public record Claim(String uid, String name, String namespace, long bytes, List<String> accessModes, boolean block) {

        public String pvName() {
            return "pvc-" + uid;
        }
    }

    private SidecarRequests() {
    }

    public static Map<String, String> segment(String node) {
        return Map.of(TOPOLOGY_KEY, node);
    }

    public static GetCapacityRequest getCapacity(Provisioner v, StorageClass sc, Map<String, String> segment) {
        GetCapacityRequest.Builder b = GetCapacityRequest.newBuilder().putAllParameters(sc.parameters())
                .setAccessibleTopology(Topology.newBuilder().putAllSegments(segment));
        if (v.fakesCapacityCapability()) {
            b.addVolumeCapabilities(VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.getDefaultInstance())
                    .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(Mode.UNKNOWN)));
        }
        return b.build();
    }

    /**
     * @param driverMultiWriter the driver advertises SINGLE_NODE_MULTI_WRITER (loopcsi does)
     * @param source            the data source, or null
     * @param vacParameters     the claim's VolumeAttributesClass parameters, or null
     */
    public static CreateVolumeRequest createVolume(Provisioner v, StorageClass sc, Claim claim, String defaultFsType, String selectedNode,
            boolean driverMultiWriter, VolumeContentSource source, Map<String, String> vacParameters) {
        CreateVolumeRequest.Builder b = CreateVolumeRequest.newBuilder().setName(claim.pvName())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(claim.bytes()));
        String fs = sc.parameters().getOrDefault("csi.storage.k8s.io/fstype", defaultFsType);
        for (String mode : claim.accessModes()) {
            b.addVolumeCapabilities(capability(claim.block(), fs, sc.mountOptions(), accessMode(v.mapsToMultiWriter(), mode, driverMultiWriter)));
        }
        Map<String, String> params = withoutPrefixedKeys(sc.parameters());
        params.put("csi.storage.k8s.io/pvc/name", claim.name());
        params.put("csi.storage.k8s.io/pvc/namespace", claim.namespace());
        params.put("csi.storage.k8s.io/pv/name", claim.pvName());
        b.putAllParameters(params);
        Topology selected = Topology.newBuilder().putAllSegments(segment(selectedNode)).build();
        b.setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(selected).addPreferred(selected));
        if (source != null) {
            b.setVolumeContentSource(source);
        }
        if (vacParameters != null && v.passesMutableParameters()) {
            b.putAllMutableParams(vacParameters);
        }
        return b.build();
    }

    public static DeleteVolumeRequest deleteVolume(String volumeId) {
        return DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build();
    }

    public static VolumeContentSource fromSnapshot(String snapshotHandle) {
        return VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshotHandle)).build();
    }

    public static VolumeContentSource fromVolume(String volumeHandle) {
        return VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(volumeHandle)).build();
    }

    /**
     * csi-resizer: the PV's volume handle, fsType, mountOptions and volume mode, the claim's new
     * size, and the PV's access mode as its csi-lib-utils maps it (csi-resizer v1.1 already maps
     * ReadWriteOnce to SINGLE_NODE_MULTI_WRITER for a driver with that capability).
     */
    public static ControllerExpandVolumeRequest expandVolume(String volumeHandle, long bytes, boolean block, String fsType,
            List<String> mountOptions, String pvAccessMode, boolean driverMultiWriter) {
        return ControllerExpandVolumeRequest.newBuilder().setVolumeId(volumeHandle)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                .setVolumeCapability(capability(block, fsType, mountOptions, accessMode(true, pvAccessMode, driverMultiWriter)))
                .build();
    }

    public static ControllerModifyVolumeRequest modifyVolume(String volumeHandle, Map<String, String> vacParameters) {
        return ControllerModifyVolumeRequest.newBuilder().setVolumeId(volumeHandle).putAllMutableParameters(vacParameters).build();
    }

    /** csi-snapshotter with --extra-create-metadata, for VolumeSnapshot NAMESPACE/NAME of UID and its content. */
    public static CreateSnapshotRequest createSnapshot(String sourceVolumeHandle, String snapshotUid, String snapshotName, String namespace,
            String contentName, Map<String, String> classParameters) {
        Map<String, String> params = withoutPrefixedKeys(classParameters);
        params.put("csi.storage.k8s.io/volumesnapshot/name", snapshotName);
        params.put("csi.storage.k8s.io/volumesnapshot/namespace", namespace);
        params.put("csi.storage.k8s.io/volumesnapshotcontent/name", contentName);
        return CreateSnapshotRequest.newBuilder().setSourceVolumeId(sourceVolumeHandle).setName("snapshot-" + snapshotUid)
                .putAllParameters(params).build();
    }

    public static DeleteSnapshotRequest deleteSnapshot(String handle) {
        return DeleteSnapshotRequest.newBuilder().setSnapshotId(handle).build();
    }

    /** The status check of a pre-provisioned VolumeSnapshotContent (only with LIST_SNAPSHOTS). */
    public static ListSnapshotsRequest listSnapshot(String handle) {
        return ListSnapshotsRequest.newBuilder().setSnapshotId(handle).build();
    }

    public static CreateVolumeGroupSnapshotRequest createGroupSnapshot(String groupUid, List<String> volumeHandles) {
        return CreateVolumeGroupSnapshotRequest.newBuilder().setName("groupsnapshot-" + groupUid).addAllSourceVolumeIds(volumeHandles).build();
    }

    public static GetVolumeGroupSnapshotRequest getGroupSnapshot(String handle, List<String> snapshotHandles) {
        return GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(handle).addAllSnapshotIds(snapshotHandles).build();
    }

    public static DeleteVolumeGroupSnapshotRequest deleteGroupSnapshot(String handle, List<String> snapshotHandles) {
        return DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(handle).addAllSnapshotIds(snapshotHandles).build();
    }

    static VolumeCapability capability(boolean block, String fsType, List<String> mountOptions, Mode mode) {
        VolumeCapability.Builder c = VolumeCapability.newBuilder().setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(mode));
        if (block) {
            c.setBlock(VolumeCapability.BlockVolume.getDefaultInstance());
        } else {
            c.setMount(VolumeCapability.MountVolume.newBuilder().setFsType(fsType == null ? "" : fsType).addAllMountFlags(mountOptions));
        }
        return c.build();
    }

    static Mode accessMode(boolean knowsMultiWriter, String pvcMode, boolean driverMultiWriter) {
        boolean multi = knowsMultiWriter && driverMultiWriter;
        return switch (pvcMode) {
            case "ReadWriteOnce" -> multi ? Mode.SINGLE_NODE_MULTI_WRITER : Mode.SINGLE_NODE_WRITER;
            case "ReadWriteOncePod" -> multi ? Mode.SINGLE_NODE_SINGLE_WRITER : Mode.SINGLE_NODE_WRITER;
            case "ReadOnlyMany" -> Mode.MULTI_NODE_READER_ONLY;
            case "ReadWriteMany" -> Mode.MULTI_NODE_MULTI_WRITER;
            default -> throw new IllegalArgumentException("access mode " + pvcMode);
        };
    }

    /**
     * The class' parameters without the keys Kubernetes reserves (csi.storage.k8s.io/fstype, the
     * secret references); an unknown csi.storage.k8s.io/ key makes csi-provisioner refuse the claim
     * ("found unknown parameter key ... with reserved namespace"), and so does this.
     */
    static Map<String, String> withoutPrefixedKeys(Map<String, String> parameters) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : parameters.entrySet()) {
            if (!e.getKey().startsWith("csi.storage.k8s.io/")) {
                out.put(e.getKey(), e.getValue());
            } else if (!RESERVED.contains(e.getKey().substring("csi.storage.k8s.io/".length()))) {
                throw new IllegalArgumentException("found unknown parameter key \"" + e.getKey() + "\" with reserved namespace csi.storage.k8s.io/");
            }
        }
        return out;
    }

    static final List<String> RESERVED = List.of("fstype", "provisioner-secret-name", "provisioner-secret-namespace",
            "controller-publish-secret-name", "controller-publish-secret-namespace", "node-stage-secret-name", "node-stage-secret-namespace",
            "node-publish-secret-name", "node-publish-secret-namespace", "controller-expand-secret-name", "controller-expand-secret-namespace",
            "node-expand-secret-name", "node-expand-secret-namespace", "snapshotter-secret-name", "snapshotter-secret-namespace",
            "snapshotter-list-secret-name", "snapshotter-list-secret-namespace", "group-snapshotter-secret-name",
            "group-snapshotter-secret-namespace");
}
