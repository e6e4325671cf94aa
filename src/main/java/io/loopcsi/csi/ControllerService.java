package io.loopcsi.csi;

import java.util.List;
import java.util.Optional;

import com.google.protobuf.Int64Value;

import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.ControllerExpandVolumeResponse;
import csi.v1.ControllerGetCapabilitiesRequest;
import csi.v1.ControllerGetCapabilitiesResponse;
import csi.v1.ControllerGetVolumeRequest;
import csi.v1.ControllerGetVolumeResponse;
import csi.v1.ControllerGrpc;
import csi.v1.ControllerModifyVolumeRequest;
import csi.v1.ControllerModifyVolumeResponse;
import csi.v1.ControllerServiceCapability;
import csi.v1.ControllerServiceCapability.RPC.Type;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateSnapshotResponse;
import csi.v1.CreateVolumeRequest;
import csi.v1.CreateVolumeResponse;
import csi.v1.DeleteSnapshotRequest;
import csi.v1.DeleteSnapshotResponse;
import csi.v1.DeleteVolumeRequest;
import csi.v1.DeleteVolumeResponse;
import csi.v1.GetCapacityRequest;
import csi.v1.GetCapacityResponse;
import csi.v1.ListSnapshotsRequest;
import csi.v1.ListSnapshotsResponse;
import csi.v1.ListVolumesRequest;
import csi.v1.ListVolumesResponse;
import csi.v1.ValidateVolumeCapabilitiesRequest;
import csi.v1.ValidateVolumeCapabilitiesResponse;
import csi.v1.VolumeCapability;
import csi.v1.VolumeContentSource;
import io.grpc.stub.StreamObserver;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Filesystems;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.engine.VolumeProvider;
import io.quarkus.arc.lookup.LookupUnlessProperty;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;

/**
 * CSI Controller: validates requests and hands them to the {@link VolumeProvider} (the local
 * engine in the standalone role). Blocking: each call runs on a worker thread, never on the
 * event loop, since volume work spawns processes and copies files.
 */
@GrpcService
@Blocking
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "node", lookupIfMissing = true)
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "operator", lookupIfMissing = true)
public class ControllerService extends ControllerGrpc.ControllerImplBase {

    static final List<Type> CAPABILITIES = List.of(Type.CREATE_DELETE_VOLUME, Type.LIST_VOLUMES, Type.GET_CAPACITY,
            Type.EXPAND_VOLUME, Type.CREATE_DELETE_SNAPSHOT, Type.LIST_SNAPSHOTS, Type.CLONE_VOLUME, Type.GET_VOLUME,
            Type.VOLUME_CONDITION, Type.SINGLE_NODE_MULTI_WRITER);

    private final VolumeProvider provider;

    ControllerService(VolumeProvider provider) {
        this.provider = provider;
    }

    /** What this role's provider can do: MODIFY_VOLUME only where it works (the standalone engine). */
    List<Type> capabilities() {
        List<Type> all = new java.util.ArrayList<>(CAPABILITIES);
        if (provider.modifiable()) {
            all.add(Type.MODIFY_VOLUME);
        }
        return all;
    }

    @Override
    public void controllerModifyVolume(ControllerModifyVolumeRequest req, StreamObserver<ControllerModifyVolumeResponse> observer) {
        GrpcErrors.answer("ControllerModifyVolume", observer, () -> {
            if (!provider.modifiable()) {
                provider.modifyVolume(req.getVolumeId(), MutableParameters.NONE); // UNIMPLEMENTED, with the reason
            }
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            CsiArgs.requireMapSize("mutable_parameters", req.getMutableParametersMap());
            MutableParameters changes = MutableParameters.parse("mutable_parameters", req.getMutableParametersMap());
            if (!Ids.isVolumeId(id)) {
                throw EngineException.notFound("volume " + Ids.quote(id) + " does not exist");
            }
            if (req.getMutableParametersCount() == 0) {
                // Nothing to change: csi-sanity v5.3.1 sends an empty map unless --csi.testvolumemutableparameters is
                // given (pkg/sanity/controller.go), and the spec names no error for it. Still NOT_FOUND for no volume.
                provider.volume(id).orElseThrow(() -> EngineException.notFound("volume " + Ids.quote(id) + " does not exist"));
                return ControllerModifyVolumeResponse.getDefaultInstance();
            }
            provider.modifyVolume(id, changes);
            return ControllerModifyVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void createVolume(CreateVolumeRequest req, StreamObserver<CreateVolumeResponse> observer) {
        GrpcErrors.answer("CreateVolume", observer, () -> {
            String name = CsiArgs.requireName("name", req.getName());
            CsiArgs.Access access = CsiArgs.accessOfAll("volume_capabilities", req.getVolumeCapabilitiesList());
            CsiArgs.requireMapSize("parameters", req.getParametersMap());
            CsiArgs.requireRange("capacity_range", req.getCapacityRange());
            MutableParameters mutable = MutableParameters.NONE;
            if (req.getMutableParamsCount() > 0) {
                if (!provider.modifiable()) {
                    throw GrpcErrors.invalid("mutable_parameters " + req.getMutableParamsMap().keySet()
                            + " are not supported: this role has no MODIFY_VOLUME capability");
                }
                CsiArgs.requireMapSize("mutable_parameters", req.getMutableParamsMap());
                mutable = MutableParameters.parse("mutable_parameters", req.getMutableParamsMap());
            }
            String snapshot = null;
            String volume = null;
            if (req.hasVolumeContentSource()) {
                VolumeContentSource src = req.getVolumeContentSource();
                switch (src.getTypeCase()) {
                    case SNAPSHOT -> snapshot = CsiArgs.requireId("volume_content_source.snapshot.snapshot_id",
                            src.getSnapshot().getSnapshotId());
                    case VOLUME -> volume = CsiArgs.requireId("volume_content_source.volume.volume_id", src.getVolume().getVolumeId());
                    default -> throw GrpcErrors.invalid("volume_content_source: one of snapshot or volume is required");
                }
            }
            VolumeMeta v = provider.createVolume(new CreateRequest(name, req.getCapacityRange().getRequiredBytes(),
                    req.getCapacityRange().getLimitBytes(), access.mode(), access.fsType(), snapshot, volume, req.getParametersMap(),
                    mutable), placement(req));
            return CreateVolumeResponse.newBuilder().setVolume(CsiTypes.volume(v, provider.nodeOf(v.id()))).build();
        });
    }

    /** The accessibility requirements as node names: the provider places the volume (or refuses). */
    private static Placement placement(CreateVolumeRequest req) {
        if (!req.hasAccessibilityRequirements()) {
            return Placement.ANYWHERE;
        }
        List<String> requisite = new java.util.ArrayList<>();
        List<String> preferred = new java.util.ArrayList<>();
        req.getAccessibilityRequirements().getRequisiteList().forEach(t -> requisite.add(t.getSegmentsMap().get(CsiTypes.TOPOLOGY_KEY)));
        req.getAccessibilityRequirements().getPreferredList().forEach(t -> preferred.add(t.getSegmentsMap().get(CsiTypes.TOPOLOGY_KEY)));
        return new Placement(requisite, preferred);
    }

    @Override
    public void deleteVolume(DeleteVolumeRequest req, StreamObserver<DeleteVolumeResponse> observer) {
        GrpcErrors.answer("DeleteVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            if (Ids.isVolumeId(id)) { // anything else cannot exist: deleting it succeeds
                provider.deleteVolume(id);
            }
            return DeleteVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest req,
            StreamObserver<ValidateVolumeCapabilitiesResponse> observer) {
        GrpcErrors.answer("ValidateVolumeCapabilities", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            if (req.getVolumeCapabilitiesCount() == 0) {
                throw GrpcErrors.invalid("volume_capabilities is required");
            }
            VolumeMeta v = provider.volume(id).orElseThrow(() -> EngineException.notFound("volume " + Ids.quote(id) + " does not exist"));
            if (req.getMutableParamsCount() > 0) {
                if (!provider.modifiable()) {
                    return ValidateVolumeCapabilitiesResponse.newBuilder().setMessage("mutable_parameters "
                            + req.getMutableParamsMap().keySet() + " are not supported: this role has no MODIFY_VOLUME capability").build();
                }
                try {
                    MutableParameters.parse("mutable_parameters", req.getMutableParamsMap());
                } catch (EngineException e) {
                    return ValidateVolumeCapabilitiesResponse.newBuilder().setMessage(e.getMessage()).build();
                }
            }
            for (int i = 0; i < req.getVolumeCapabilitiesCount(); i++) {
                String why = unsupported(v, req.getVolumeCapabilities(i), "volume_capabilities[" + i + "]");
                if (why != null) {
                    return ValidateVolumeCapabilitiesResponse.newBuilder().setMessage(why).build();
                }
            }
            return ValidateVolumeCapabilitiesResponse.newBuilder().setConfirmed(
                    ValidateVolumeCapabilitiesResponse.Confirmed.newBuilder()
                            .putAllVolumeContext(req.getVolumeContextMap())
                            .addAllVolumeCapabilities(req.getVolumeCapabilitiesList())
                            .putAllParameters(req.getParametersMap())
                            .putAllMutableParams(req.getMutableParamsMap()))
                    .build();
        });
    }

    /** Why the volume cannot be used with this capability, or null when it can. */
    private static String unsupported(VolumeMeta v, VolumeCapability cap, String field) {
        CsiArgs.Access a;
        try {
            a = CsiArgs.access(field, cap);
        } catch (io.grpc.StatusRuntimeException e) {
            return e.getStatus().getDescription();
        }
        if (a.mode() != v.mode()) {
            return field + ": volume " + v.id() + " is a " + v.mode() + " volume, not " + a.mode();
        }
        if (a.mode() == VolumeMode.FILESYSTEM && !a.fsType().isEmpty() && !a.fsType().equals(v.fsType())) {
            return field + ": volume " + v.id() + " holds " + v.fsType() + ", not " + a.fsType();
        }
        return null;
    }

    @Override
    public void listVolumes(ListVolumesRequest req, StreamObserver<ListVolumesResponse> observer) {
        GrpcErrors.answer("ListVolumes", observer, () -> {
            Paging.Page<VolumeMeta> page = Paging.page(provider.volumes(), VolumeMeta::id, req.getMaxEntries(),
                    req.getStartingToken(), Ids::isVolumeId);
            ListVolumesResponse.Builder b = ListVolumesResponse.newBuilder().setNextToken(page.nextToken());
            for (VolumeMeta v : page.items()) {
                b.addEntries(ListVolumesResponse.Entry.newBuilder()
                        .setVolume(CsiTypes.volume(v, provider.nodeOf(v.id())))
                        .setStatus(ListVolumesResponse.VolumeStatus.newBuilder()
                                .setVolumeCondition(CsiTypes.condition(provider.condition(v.id())))));
            }
            return b.build();
        });
    }

    @Override
    public void controllerGetVolume(ControllerGetVolumeRequest req, StreamObserver<ControllerGetVolumeResponse> observer) {
        GrpcErrors.answer("ControllerGetVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            VolumeMeta v = provider.volume(id).orElseThrow(() -> EngineException.notFound("volume " + Ids.quote(id) + " does not exist"));
            return ControllerGetVolumeResponse.newBuilder()
                    .setVolume(CsiTypes.volume(v, provider.nodeOf(v.id())))
                    .setStatus(ControllerGetVolumeResponse.VolumeStatus.newBuilder()
                            .setVolumeCondition(CsiTypes.condition(provider.condition(id))))
                    .build();
        });
    }

    @Override
    public void getCapacity(GetCapacityRequest req, StreamObserver<GetCapacityResponse> observer) {
        GrpcErrors.answer("GetCapacity", observer, () -> {
            java.util.OptionalLong smallest = CsiArgs.capacityMinimum("volume_capabilities", req.getVolumeCapabilitiesList());
            if (smallest.isEmpty()) {
                return GetCapacityResponse.newBuilder().setAvailableCapacity(0).build(); // no volume of ours has these capabilities
            }
            long minimum = smallest.getAsLong();
            String node = req.hasAccessibleTopology() ? req.getAccessibleTopology().getSegmentsMap().get(CsiTypes.TOPOLOGY_KEY) : null;
            PoolCapacity c = provider.capacity(node);
            if (c.totalBytes() == 0) {
                return GetCapacityResponse.newBuilder().setAvailableCapacity(0).build(); // a segment the pool does not serve
            }
            // The thin figure: provisioning is a mutable parameter (a VolumeAttributesClass), which GetCapacity is never sent, and
            // thin is its default. Without overcommit both figures are one; with it, a thick volume the node cannot take is refused
            // by CreateVolume with RESOURCE_EXHAUSTED, and csi-provisioner reschedules (issue 24).
            long maxVolume = provider.largestVolumeBytes(node, false) / Sizes.MIB * Sizes.MIB; // one node's room: volumes do not span nodes
            return GetCapacityResponse.newBuilder()
                    .setAvailableCapacity(c.availableBytes())
                    .setMaximumVolumeSize(Int64Value.of(maxVolume))
                    .setMinimumVolumeSize(Int64Value.of(minimum))
                    .build();
        });
    }

    @Override
    public void controllerGetCapabilities(ControllerGetCapabilitiesRequest req, StreamObserver<ControllerGetCapabilitiesResponse> observer) {
        GrpcErrors.answer("ControllerGetCapabilities", observer, () -> {
            ControllerGetCapabilitiesResponse.Builder b = ControllerGetCapabilitiesResponse.newBuilder();
            for (Type t : capabilities()) {
                b.addCapabilities(ControllerServiceCapability.newBuilder()
                        .setRpc(ControllerServiceCapability.RPC.newBuilder().setType(t)));
            }
            return b.build();
        });
    }

    @Override
    public void controllerExpandVolume(ControllerExpandVolumeRequest req, StreamObserver<ControllerExpandVolumeResponse> observer) {
        GrpcErrors.answer("ControllerExpandVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            if (!req.hasCapacityRange()) {
                throw GrpcErrors.invalid("capacity_range is required");
            }
            CsiArgs.requireRange("capacity_range", req.getCapacityRange());
            CsiArgs.Access a = req.hasVolumeCapability() ? CsiArgs.access("volume_capability", req.getVolumeCapability()) : null;
            VolumeMeta current = provider.volume(id).orElseThrow(() -> EngineException.notFound("volume " + Ids.quote(id) + " does not exist"));
            if (a != null) {
                String why = unsupported(current, req.getVolumeCapability(), "volume_capability");
                if (why != null) {
                    throw GrpcErrors.invalid(why); // the spec's "Exceeds capabilities" of ControllerExpandVolume
                }
            }
            VolumeMeta v = provider.expandVolume(id, req.getCapacityRange().getRequiredBytes(), req.getCapacityRange().getLimitBytes());
            // The node refreshes the loop device and grows the filesystem (NodeExpandVolume), block volumes included.
            return ControllerExpandVolumeResponse.newBuilder().setCapacityBytes(v.capacityBytes()).setNodeExpansionRequired(true).build();
        });
    }

    @Override
    public void createSnapshot(CreateSnapshotRequest req, StreamObserver<CreateSnapshotResponse> observer) {
        GrpcErrors.answer("CreateSnapshot", observer, () -> {
            String name = CsiArgs.requireName("name", req.getName());
            String source = CsiArgs.requireId("source_volume_id", req.getSourceVolumeId());
            CsiArgs.requireMapSize("parameters", req.getParametersMap());
            if (!Ids.isVolumeId(source)) {
                throw EngineException.notFound("source volume " + Ids.quote(source) + " does not exist");
            }
            SnapshotMeta s = provider.createSnapshot(name, source);
            return CreateSnapshotResponse.newBuilder().setSnapshot(CsiTypes.snapshot(s)).build();
        });
    }

    @Override
    public void deleteSnapshot(DeleteSnapshotRequest req, StreamObserver<DeleteSnapshotResponse> observer) {
        GrpcErrors.answer("DeleteSnapshot", observer, () -> {
            String id = CsiArgs.requireId("snapshot_id", req.getSnapshotId());
            if (Ids.isSnapshotId(id)) {
                provider.deleteSnapshot(id);
            }
            return DeleteSnapshotResponse.getDefaultInstance();
        });
    }

    @Override
    public void listSnapshots(ListSnapshotsRequest req, StreamObserver<ListSnapshotsResponse> observer) {
        GrpcErrors.answer("ListSnapshots", observer, () -> {
            List<SnapshotMeta> all;
            if (!req.getSnapshotId().isEmpty()) {
                Optional<SnapshotMeta> one = provider.snapshot(req.getSnapshotId());
                all = one.filter(s -> req.getSourceVolumeId().isEmpty() || s.sourceVolumeId().equals(req.getSourceVolumeId()))
                        .map(List::of).orElse(List.of());
            } else if (!req.getSourceVolumeId().isEmpty()) {
                all = provider.snapshots().stream().filter(s -> s.sourceVolumeId().equals(req.getSourceVolumeId())).toList();
            } else {
                all = provider.snapshots();
            }
            Paging.Page<SnapshotMeta> page = Paging.page(all, SnapshotMeta::id, req.getMaxEntries(), req.getStartingToken(),
                    Ids::isSnapshotId);
            ListSnapshotsResponse.Builder b = ListSnapshotsResponse.newBuilder().setNextToken(page.nextToken());
            page.items().forEach(s -> b.addEntries(ListSnapshotsResponse.Entry.newBuilder().setSnapshot(CsiTypes.snapshot(s))));
            return b.build();
        });
    }
}
