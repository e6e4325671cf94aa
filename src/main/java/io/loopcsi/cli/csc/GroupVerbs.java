package io.loopcsi.cli.csc;

import static io.loopcsi.cli.csc.Flag.PARAMS;
import static io.loopcsi.cli.csc.Flag.SNAPSHOT_ID;
import static io.loopcsi.cli.csc.Flag.SOURCE_VOLUME;

import java.util.List;

import csi.v1.CreateVolumeGroupSnapshotRequest;
import csi.v1.CreateVolumeGroupSnapshotResponse;
import csi.v1.DeleteVolumeGroupSnapshotRequest;
import csi.v1.DeleteVolumeGroupSnapshotResponse;
import csi.v1.GetVolumeGroupSnapshotRequest;
import csi.v1.GetVolumeGroupSnapshotResponse;
import csi.v1.GroupControllerGetCapabilitiesRequest;
import csi.v1.GroupControllerGetCapabilitiesResponse;
import csi.v1.GroupControllerServiceCapability;

/** {@code csc group ...}: the CSI GroupController service (volume group snapshots). */
final class GroupVerbs {

    private static final String S = "group";

    private GroupVerbs() {
    }

    static List<Verb> all() {
        return List.of(
                Verb.of(S, "create-snapshot", List.of("s", "snap"), "CreateVolumeGroupSnapshot", "NAME...", 1, -1,
                        List.of(SOURCE_VOLUME, PARAMS), GroupVerbs::createSnapshot),
                Verb.of(S, "delete-snapshot", List.of("ds", "delsnap"), "DeleteVolumeGroupSnapshot", "GROUP_SNAPSHOT_ID", 1, 1,
                        List.of(SNAPSHOT_ID), GroupVerbs::deleteSnapshot),
                Verb.of(S, "get-snapshot", List.of("gs"), "GetVolumeGroupSnapshot", "GROUP_SNAPSHOT_ID", 1, 1, List.of(SNAPSHOT_ID),
                        GroupVerbs::getSnapshot),
                Verb.of(S, "get-capabilities", List.of("capabilities"), "GroupControllerGetCapabilities", "", 0, 0, List.of(),
                        GroupVerbs::getCapabilities));
    }

    /** Per name: the group's line, then one snapshot line per member. */
    private static void createSnapshot(Verb.Call c) throws UsageException {
        Options o = c.opt();
        if (o.sourceVolumes.isEmpty()) {
            throw new UsageException("'group create-snapshot' needs --source-volume VOLUME_ID, once per member volume");
        }
        CreateVolumeGroupSnapshotRequest.Builder req = CreateVolumeGroupSnapshotRequest.newBuilder()
                .addAllSourceVolumeIds(o.sourceVolumes).putAllParameters(o.params);
        for (String name : c.args()) {
            CreateVolumeGroupSnapshotResponse r = c.csi().group().createVolumeGroupSnapshot(req.setName(name).build());
            c.out().emit(r, () -> Lines.groupSnapshot(r.getGroupSnapshot()));
        }
    }

    private static void deleteSnapshot(Verb.Call c) throws UsageException {
        Options o = c.opt();
        if (o.snapshotIds.isEmpty()) {
            throw new UsageException("'group delete-snapshot' needs --snapshot-id SNAPSHOT_ID, once per member snapshot");
        }
        String id = c.args().get(0);
        DeleteVolumeGroupSnapshotResponse r = c.csi().group().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(id).addAllSnapshotIds(o.snapshotIds).build());
        c.out().emit(r, () -> id + "\n");
    }

    private static void getSnapshot(Verb.Call c) throws UsageException {
        Options o = c.opt();
        if (o.snapshotIds.isEmpty()) {
            throw new UsageException("'group get-snapshot' needs --snapshot-id SNAPSHOT_ID, once per member snapshot");
        }
        GetVolumeGroupSnapshotResponse r = c.csi().group().getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(c.args().get(0)).addAllSnapshotIds(o.snapshotIds).build());
        c.out().emit(r, () -> Lines.groupSnapshot(r.getGroupSnapshot()));
    }

    /** One RPC capability name per line. */
    private static void getCapabilities(Verb.Call c) {
        GroupControllerGetCapabilitiesResponse r = c.csi().group()
                .groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest.getDefaultInstance());
        c.out().emit(r, () -> {
            StringBuilder b = new StringBuilder();
            for (GroupControllerServiceCapability cap : r.getCapabilitiesList()) {
                if (cap.hasRpc()) {
                    b.append(cap.getRpc().getType()).append('\n');
                }
            }
            return b.toString();
        });
    }
}
