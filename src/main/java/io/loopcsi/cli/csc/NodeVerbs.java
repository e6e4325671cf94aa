package io.loopcsi.cli.csc;

import static io.loopcsi.cli.csc.Flag.CAP;
import static io.loopcsi.cli.csc.Flag.LIM_BYTES;
import static io.loopcsi.cli.csc.Flag.PUB_CONTEXT;
import static io.loopcsi.cli.csc.Flag.READ_ONLY;
import static io.loopcsi.cli.csc.Flag.REQ_BYTES;
import static io.loopcsi.cli.csc.Flag.STAGING_TARGET_PATH;
import static io.loopcsi.cli.csc.Flag.TARGET_PATH;
import static io.loopcsi.cli.csc.Flag.VOL_CONTEXT;

import java.util.ArrayList;
import java.util.List;

import csi.v1.NodeExpandVolumeRequest;
import csi.v1.NodeExpandVolumeResponse;
import csi.v1.NodeGetCapabilitiesRequest;
import csi.v1.NodeGetCapabilitiesResponse;
import csi.v1.NodeGetInfoRequest;
import csi.v1.NodeGetInfoResponse;
import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.NodeGetVolumeStatsResponse;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodePublishVolumeResponse;
import csi.v1.NodeServiceCapability;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeStageVolumeResponse;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnpublishVolumeResponse;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.NodeUnstageVolumeResponse;
import csi.v1.VolumeUsage;

/**
 * {@code csc node ...}. Stage, unstage, publish and unpublish take one or more volume IDs, send
 * the same paths and capability for each, and print each ID once its call succeeded (as csc).
 */
final class NodeVerbs {

    private static final String S = "node";

    private NodeVerbs() {
    }

    static List<Verb> all() {
        return List.of(
                Verb.of(S, "stage", List.of(), "NodeStageVolume", "VOLUME_ID...", 1, -1,
                        List.of(STAGING_TARGET_PATH, CAP, PUB_CONTEXT, VOL_CONTEXT), NodeVerbs::stage),
                Verb.of(S, "unstage", List.of(), "NodeUnstageVolume", "VOLUME_ID...", 1, -1, List.of(STAGING_TARGET_PATH),
                        NodeVerbs::unstage),
                Verb.of(S, "publish", List.of("mnt", "mount"), "NodePublishVolume", "VOLUME_ID...", 1, -1,
                        List.of(STAGING_TARGET_PATH, TARGET_PATH, CAP, READ_ONLY, PUB_CONTEXT, VOL_CONTEXT), NodeVerbs::publish),
                Verb.of(S, "unpublish", List.of("umount", "unmount"), "NodeUnpublishVolume", "VOLUME_ID...", 1, -1,
                        List.of(TARGET_PATH), NodeVerbs::unpublish),
                Verb.of(S, "get-info", List.of("info"), "NodeGetInfo", "", 0, 0, List.of(), NodeVerbs::getInfo),
                Verb.of(S, "get-capabilities", List.of("capabilities"), "NodeGetCapabilities", "", 0, 0, List.of(),
                        NodeVerbs::getCapabilities),
                Verb.of(S, "stats", List.of(), "NodeGetVolumeStats", "VOLUME_ID:VOLUME_PATH[:STAGING_PATH]...", 1, -1, List.of(),
                        NodeVerbs::stats),
                Verb.of(S, "expand", List.of("expand-volume", "exp"), "NodeExpandVolume", "VOLUME_ID VOLUME_PATH", 2, 2,
                        List.of(REQ_BYTES, LIM_BYTES, STAGING_TARGET_PATH, CAP), NodeVerbs::expand));
    }

    private static void stage(Verb.Call c) throws UsageException {
        Options o = c.opt();
        NodeStageVolumeRequest.Builder req = NodeStageVolumeRequest.newBuilder().setStagingTargetPath(o.stagingTargetPath)
                .putAllPublishContext(o.publishContext).putAllVolumeContext(o.volumeContext);
        o.singleCap().ifPresent(req::setVolumeCapability);
        for (String id : c.args()) {
            NodeStageVolumeResponse r = c.csi().node().nodeStageVolume(req.setVolumeId(id).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    private static void unstage(Verb.Call c) {
        NodeUnstageVolumeRequest.Builder req = NodeUnstageVolumeRequest.newBuilder().setStagingTargetPath(c.opt().stagingTargetPath);
        for (String id : c.args()) {
            NodeUnstageVolumeResponse r = c.csi().node().nodeUnstageVolume(req.setVolumeId(id).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    private static void publish(Verb.Call c) throws UsageException {
        Options o = c.opt();
        NodePublishVolumeRequest.Builder req = NodePublishVolumeRequest.newBuilder().setStagingTargetPath(o.stagingTargetPath)
                .setTargetPath(o.targetPath).setReadonly(o.readOnly)
                .putAllPublishContext(o.publishContext).putAllVolumeContext(o.volumeContext);
        o.singleCap().ifPresent(req::setVolumeCapability);
        for (String id : c.args()) {
            NodePublishVolumeResponse r = c.csi().node().nodePublishVolume(req.setVolumeId(id).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    private static void unpublish(Verb.Call c) {
        NodeUnpublishVolumeRequest.Builder req = NodeUnpublishVolumeRequest.newBuilder().setTargetPath(c.opt().targetPath);
        for (String id : c.args()) {
            NodeUnpublishVolumeResponse r = c.csi().node().nodeUnpublishVolume(req.setVolumeId(id).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    private static void getInfo(Verb.Call c) {
        NodeGetInfoResponse r = c.csi().node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
        c.out().emit(r, () -> Lines.nodeInfo(r));
    }

    /** One RPC capability name per line. */
    private static void getCapabilities(Verb.Call c) {
        NodeGetCapabilitiesResponse r = c.csi().node().nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance());
        c.out().emit(r, () -> {
            StringBuilder b = new StringBuilder();
            for (NodeServiceCapability cap : r.getCapabilitiesList()) {
                if (cap.hasRpc()) {
                    b.append(cap.getRpc().getType()).append('\n');
                }
            }
            return b.toString();
        });
    }

    /** Each argument is {@code VOLUME_ID:VOLUME_PATH[:STAGING_PATH]}; all are checked before the first call. */
    private static void stats(Verb.Call c) throws UsageException {
        List<NodeGetVolumeStatsRequest> requests = new ArrayList<>();
        for (String arg : c.args()) {
            String[] p = arg.split(":", 3);
            if (p.length < 2 || p[0].isEmpty() || p[1].isEmpty()) {
                throw new UsageException("'node stats' argument \"" + arg + "\": expected VOLUME_ID:VOLUME_PATH[:STAGING_PATH]");
            }
            requests.add(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(p[0]).setVolumePath(p[1])
                    .setStagingTargetPath(p.length > 2 ? p[2] : "").build());
        }
        for (NodeGetVolumeStatsRequest req : requests) {
            NodeGetVolumeStatsResponse r = c.csi().node().nodeGetVolumeStats(req);
            c.out().emit(r, () -> {
                StringBuilder b = new StringBuilder();
                for (VolumeUsage u : r.getUsageList()) {
                    b.append(Lines.usage(req.getVolumeId(), req.getVolumePath(), u));
                }
                return b.toString();
            });
        }
    }

    /** The new {@code capacity_bytes}. */
    private static void expand(Verb.Call c) throws UsageException {
        Options o = c.opt();
        NodeExpandVolumeRequest.Builder req = NodeExpandVolumeRequest.newBuilder().setVolumeId(c.args().get(0))
                .setVolumePath(c.args().get(1)).setStagingTargetPath(o.stagingTargetPath);
        o.capacityRange.ifPresent(req::setCapacityRange);
        o.singleCap().ifPresent(req::setVolumeCapability);
        NodeExpandVolumeResponse r = c.csi().node().nodeExpandVolume(req.build());
        c.out().emit(r, () -> r.getCapacityBytes() + "\n");
    }
}
