package io.loopcsi.csi;

import java.nio.file.Path;
import java.util.List;

import csi.v1.NodeExpandVolumeRequest;
import csi.v1.NodeExpandVolumeResponse;
import csi.v1.NodeGetCapabilitiesRequest;
import csi.v1.NodeGetCapabilitiesResponse;
import csi.v1.NodeGetInfoRequest;
import csi.v1.NodeGetInfoResponse;
import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.NodeGetVolumeStatsResponse;
import csi.v1.NodeGrpc;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodePublishVolumeResponse;
import csi.v1.NodeServiceCapability;
import csi.v1.NodeServiceCapability.RPC.Type;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeStageVolumeResponse;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnpublishVolumeResponse;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.NodeUnstageVolumeResponse;
import csi.v1.VolumeUsage;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.NodeVolumes;
import io.loopcsi.engine.VolumeStats;
import io.quarkus.arc.lookup.LookupUnlessProperty;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;

/** CSI Node: stage, publish and measure pool volumes on this machine. */
@GrpcService
@Blocking
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "controller", lookupIfMissing = true)
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "operator", lookupIfMissing = true)
public class NodeService extends NodeGrpc.NodeImplBase {

    static final List<Type> CAPABILITIES = List.of(Type.STAGE_UNSTAGE_VOLUME, Type.GET_VOLUME_STATS, Type.EXPAND_VOLUME,
            Type.VOLUME_CONDITION, Type.SINGLE_NODE_MULTI_WRITER);

    private final NodeVolumes node;
    private final DriverConfig config;
    private final String nodeId;
    private final PathGuard paths;

    NodeService(NodeVolumes node, DriverConfig config, PathGuard paths) {
        this.node = node;
        this.paths = paths;
        this.config = config;
        this.nodeId = EngineBeans.nodeId(config);
    }

    // Every RPC checks its own fields first (INVALID_ARGUMENT, whatever the volume ID), and only
    // then looks the volume up (NOT_FOUND): the order of the spec's error tables and of csi-sanity.

    @Override
    public void nodeStageVolume(NodeStageVolumeRequest req, StreamObserver<NodeStageVolumeResponse> observer) {
        GrpcErrors.answer("NodeStageVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            Path staging = paths.check("staging_target_path", req.getStagingTargetPath());
            CsiArgs.Access a = capability(req.hasVolumeCapability(), req.getVolumeCapability());
            node.stage(volumeId(id), staging, a.mode(), a.fsType(), a.mountFlags(), a.readOnly());
            return NodeStageVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodeUnstageVolume(NodeUnstageVolumeRequest req, StreamObserver<NodeUnstageVolumeResponse> observer) {
        GrpcErrors.answer("NodeUnstageVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            Path staging = paths.check("staging_target_path", req.getStagingTargetPath());
            node.unstage(volumeId(id), staging);
            return NodeUnstageVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodePublishVolume(NodePublishVolumeRequest req, StreamObserver<NodePublishVolumeResponse> observer) {
        GrpcErrors.answer("NodePublishVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            Path target = paths.check("target_path", req.getTargetPath());
            CsiArgs.Access a = capability(req.hasVolumeCapability(), req.getVolumeCapability());
            if (req.getStagingTargetPath().isEmpty()) {
                throw Status.FAILED_PRECONDITION.withDescription("staging_target_path is not set: this plugin has the"
                        + " STAGE_UNSTAGE_VOLUME capability, call NodeStageVolume first and pass its path").asRuntimeException();
            }
            Path staging = paths.check("staging_target_path", req.getStagingTargetPath());
            if (target.equals(staging)) {
                throw GrpcErrors.invalid("target_path must differ from staging_target_path");
            }
            node.publish(volumeId(id), staging, target, a.mode(), a.fsType(), a.mountFlags(), req.getReadonly() || a.readOnly(),
                    a.singleWriter());
            return NodePublishVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodeUnpublishVolume(NodeUnpublishVolumeRequest req, StreamObserver<NodeUnpublishVolumeResponse> observer) {
        GrpcErrors.answer("NodeUnpublishVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            Path target = paths.check("target_path", req.getTargetPath());
            node.unpublish(volumeId(id), target);
            return NodeUnpublishVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodeGetVolumeStats(NodeGetVolumeStatsRequest req, StreamObserver<NodeGetVolumeStatsResponse> observer) {
        GrpcErrors.answer("NodeGetVolumeStats", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            Path given = CsiArgs.volumePath("volume_path", req.getVolumePath());
            CsiArgs.optionalPath("staging_target_path", req.getStagingTargetPath());
            node.volume(volumeId(id));
            VolumeStats s = node.stats(id, where(id, given, req.getVolumePath()));
            NodeGetVolumeStatsResponse.Builder b = NodeGetVolumeStatsResponse.newBuilder()
                    .setVolumeCondition(CsiTypes.condition(s.condition()));
            b.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.BYTES).setTotal(s.totalBytes())
                    .setAvailable(Math.max(0, s.availableBytes())).setUsed(Math.max(0, s.usedBytes())));
            if (s.totalInodes() >= 0) {
                b.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.INODES).setTotal(s.totalInodes())
                        .setAvailable(s.freeInodes()).setUsed(s.totalInodes() - s.freeInodes()));
            }
            return b.build();
        });
    }

    @Override
    public void nodeExpandVolume(NodeExpandVolumeRequest req, StreamObserver<NodeExpandVolumeResponse> observer) {
        GrpcErrors.answer("NodeExpandVolume", observer, () -> {
            String id = CsiArgs.requireId("volume_id", req.getVolumeId());
            Path given = CsiArgs.volumePath("volume_path", req.getVolumePath());
            CsiArgs.optionalPath("staging_target_path", req.getStagingTargetPath());
            if (req.hasCapacityRange()) {
                CsiArgs.requireRange("capacity_range", req.getCapacityRange());
            }
            CsiArgs.Access a = req.hasVolumeCapability() ? CsiArgs.access("volume_capability", req.getVolumeCapability()) : null;
            node.volume(volumeId(id));
            Path volumePath = where(id, given, req.getVolumePath());
            if (a != null) {
                node.requireCapability(id, a.mode(), a.fsType()); // here "exceeds capabilities" is INVALID_ARGUMENT
            }
            long size = node.expand(id, volumePath);
            if (req.hasCapacityRange()) {
                long required = req.getCapacityRange().getRequiredBytes();
                long limit = req.getCapacityRange().getLimitBytes();
                if (required > size || (limit > 0 && size > limit)) {
                    throw Status.OUT_OF_RANGE.withDescription("capacity_range: volume " + id + " is " + size
                            + " bytes on this node; grow it with ControllerExpandVolume first").asRuntimeException();
                }
            }
            return NodeExpandVolumeResponse.newBuilder().setCapacityBytes(size).build();
        });
    }

    /**
     * Where the CO says the volume is (NodeGetVolumeStats, NodeExpandVolume): a relative path
     * cannot be (NOT_FOUND, after the volume's own lookup); one outside the allowed roots is refused.
     */
    private Path where(String id, Path given, String raw) {
        if (given == null) {
            throw EngineException.notFound("volume " + id + " is not at " + Ids.quote(raw) + ": not an absolute, normalized path");
        }
        return paths.check("volume_path", raw);
    }

    /** volume_capability of NodeStage and NodePublish: REQUIRED and well formed. */
    private static CsiArgs.Access capability(boolean present, csi.v1.VolumeCapability cap) {
        if (!present) {
            throw GrpcErrors.invalid("volume_capability is required");
        }
        return CsiArgs.access("volume_capability", cap);
    }

    @Override
    public void nodeGetCapabilities(NodeGetCapabilitiesRequest req, StreamObserver<NodeGetCapabilitiesResponse> observer) {
        GrpcErrors.answer("NodeGetCapabilities", observer, () -> {
            NodeGetCapabilitiesResponse.Builder b = NodeGetCapabilitiesResponse.newBuilder();
            for (Type t : CAPABILITIES) {
                b.addCapabilities(NodeServiceCapability.newBuilder().setRpc(NodeServiceCapability.RPC.newBuilder().setType(t)));
            }
            return b.build();
        });
    }

    @Override
    public void nodeGetInfo(NodeGetInfoRequest req, StreamObserver<NodeGetInfoResponse> observer) {
        GrpcErrors.answer("NodeGetInfo", observer, () -> NodeGetInfoResponse.newBuilder()
                .setNodeId(nodeId)
                .setMaxVolumesPerNode(config.maxVolumesPerNode())
                .setAccessibleTopology(CsiTypes.topology(nodeId))
                .build());
    }

    /** A volume ID from a node request, after its fields were checked: malformed ones name no volume of ours. */
    private static String volumeId(String id) {
        if (!Ids.isVolumeId(id)) {
            throw EngineException.notFound("volume " + Ids.quote(id) + " does not exist: loopcsi volume IDs look like vol-<32 hex digits>");
        }
        return id;
    }
}
