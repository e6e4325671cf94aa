package io.loopcsi.csi;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import csi.v1.CreateVolumeGroupSnapshotRequest;
import csi.v1.CreateVolumeGroupSnapshotResponse;
import csi.v1.DeleteVolumeGroupSnapshotRequest;
import csi.v1.DeleteVolumeGroupSnapshotResponse;
import csi.v1.GetVolumeGroupSnapshotRequest;
import csi.v1.GetVolumeGroupSnapshotResponse;
import csi.v1.GroupControllerGetCapabilitiesRequest;
import csi.v1.GroupControllerGetCapabilitiesResponse;
import csi.v1.GroupControllerGrpc;
import csi.v1.GroupControllerServiceCapability;
import io.grpc.stub.StreamObserver;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeProvider;
import io.quarkus.arc.lookup.LookupUnlessProperty;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;

/**
 * CSI GroupController: crash-consistent snapshots of several volumes at once. Served wherever
 * the Controller is; its capability (and the plugin's GROUP_CONTROLLER_SERVICE) only where the
 * provider can take them (the standalone engine; the controller role through LoopGroupSnapshots,
 * whose Identity is ControllerIdentityService). Elsewhere every call is UNIMPLEMENTED with the reason.
 */
@GrpcService
@Blocking
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "node", lookupIfMissing = true)
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "operator", lookupIfMissing = true)
public class GroupControllerService extends GroupControllerGrpc.GroupControllerImplBase {

    /** The role whose IdentityService (the csi package's) advertises GROUP_CONTROLLER_SERVICE; the controller role has its own Identity. */
    static final String SERVED_IN = "standalone";

    private final VolumeProvider provider;

    GroupControllerService(VolumeProvider provider) {
        this.provider = provider;
    }

    @Override
    public void groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest req,
            StreamObserver<GroupControllerGetCapabilitiesResponse> observer) {
        GrpcErrors.answer("GroupControllerGetCapabilities", observer, () -> {
            GroupControllerGetCapabilitiesResponse.Builder b = GroupControllerGetCapabilitiesResponse.newBuilder();
            if (provider.groupSnapshots()) {
                b.addCapabilities(GroupControllerServiceCapability.newBuilder().setRpc(GroupControllerServiceCapability.RPC.newBuilder()
                        .setType(GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT)));
            }
            return b.build();
        });
    }

    @Override
    public void createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest req, StreamObserver<CreateVolumeGroupSnapshotResponse> observer) {
        GrpcErrors.answer("CreateVolumeGroupSnapshot", observer, () -> {
            requireServed();
            String name = CsiArgs.requireName("name", req.getName());
            if (req.getSourceVolumeIdsCount() == 0) {
                throw GrpcErrors.invalid("source_volume_ids is required: the volumes to snapshot together");
            }
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < req.getSourceVolumeIdsCount(); i++) {
                String id = CsiArgs.requireId("source_volume_ids[" + i + "]", req.getSourceVolumeIds(i));
                if (!seen.add(id)) {
                    throw GrpcErrors.invalid("source_volume_ids[" + i + "]: " + Ids.quote(id) + " is listed twice");
                }
            }
            CsiArgs.requireMapSize("parameters", req.getParametersMap());
            GroupSnapshotMeta g = provider.createGroupSnapshot(name, req.getSourceVolumeIdsList());
            return CreateVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(CsiTypes.groupSnapshot(g, members(g))).build();
        });
    }

    @Override
    public void deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest req, StreamObserver<DeleteVolumeGroupSnapshotResponse> observer) {
        GrpcErrors.answer("DeleteVolumeGroupSnapshot", observer, () -> {
            requireServed();
            String id = CsiArgs.requireId("group_snapshot_id", req.getGroupSnapshotId());
            memberIds(req.getSnapshotIdsList());
            provider.deleteGroupSnapshot(id, req.getSnapshotIdsList());
            return DeleteVolumeGroupSnapshotResponse.getDefaultInstance();
        });
    }

    @Override
    public void getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest req, StreamObserver<GetVolumeGroupSnapshotResponse> observer) {
        GrpcErrors.answer("GetVolumeGroupSnapshot", observer, () -> {
            requireServed();
            String id = CsiArgs.requireId("group_snapshot_id", req.getGroupSnapshotId());
            memberIds(req.getSnapshotIdsList());
            GroupSnapshotMeta g = provider.groupSnapshot(id)
                    .orElseThrow(() -> EngineException.notFound("group snapshot " + Ids.quote(id) + " does not exist"));
            if (req.getSnapshotIdsCount() > 0 && !new java.util.TreeSet<>(req.getSnapshotIdsList()).equals(new java.util.TreeSet<>(g.snapshotIds()))) {
                throw GrpcErrors.invalid("snapshot_ids " + req.getSnapshotIdsList() + " are not the members of group snapshot " + id + ": "
                        + g.snapshotIds());
            }
            return GetVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(CsiTypes.groupSnapshot(g, members(g))).build();
        });
    }

    /**
     * snapshot_ids of Get and Delete: checked (well formed, and against the group's members) only
     * when given. The driver knows a group's members from its own records, and csi-sanity v5.3.1
     * sends none in its "invalid volume id" cases of GetVolumeGroupSnapshot (NOT_FOUND expected)
     * and DeleteVolumeGroupSnapshot (OK expected) (kubernetes-csi/csi-test pkg/sanity/groupcontroller.go).
     */
    private static void memberIds(List<String> ids) {
        for (int i = 0; i < ids.size(); i++) {
            CsiArgs.requireId("snapshot_ids[" + i + "]", ids.get(i));
        }
    }

    private void requireServed() {
        if (!provider.groupSnapshots()) {
            provider.groupSnapshot(""); // UNIMPLEMENTED, with the reason
        }
    }

    private List<SnapshotMeta> members(GroupSnapshotMeta g) {
        List<SnapshotMeta> found = new ArrayList<>();
        for (String m : g.snapshotIds()) {
            Optional<SnapshotMeta> s = provider.snapshot(m);
            s.ifPresent(found::add);
        }
        return found;
    }
}
