package io.loopcsi.cli.csc;

import static io.loopcsi.cli.csc.Flag.CAP;
import static io.loopcsi.cli.csc.Flag.LIM_BYTES;
import static io.loopcsi.cli.csc.Flag.MAX_ENTRIES;
import static io.loopcsi.cli.csc.Flag.MUTABLE_PARAMS;
import static io.loopcsi.cli.csc.Flag.PAGING;
import static io.loopcsi.cli.csc.Flag.PARAMS;
import static io.loopcsi.cli.csc.Flag.REQ_BYTES;
import static io.loopcsi.cli.csc.Flag.SNAPSHOT_ID;
import static io.loopcsi.cli.csc.Flag.SOURCE_SNAPSHOT;
import static io.loopcsi.cli.csc.Flag.SOURCE_VOLUME;
import static io.loopcsi.cli.csc.Flag.STARTING_TOKEN;
import static io.loopcsi.cli.csc.Flag.VOL_CONTEXT;

import java.util.List;

import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.ControllerExpandVolumeResponse;
import csi.v1.ControllerGetCapabilitiesRequest;
import csi.v1.ControllerGetCapabilitiesResponse;
import csi.v1.ControllerGetVolumeRequest;
import csi.v1.ControllerGetVolumeResponse;
import csi.v1.ControllerModifyVolumeRequest;
import csi.v1.ControllerModifyVolumeResponse;
import csi.v1.ControllerServiceCapability;
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
import csi.v1.VolumeContentSource;

/**
 * {@code csc controller ...}. Verbs taking several names or IDs send one request per argument,
 * in order, printing each result as it comes and stopping at the first failure (as csc does).
 */
final class ControllerVerbs {

    private static final String S = "controller";

    private ControllerVerbs() {
    }

    static List<Verb> all() {
        return List.of(
                Verb.of(S, "create-volume", List.of("n", "c", "new", "create"), "CreateVolume", "NAME...", 1, -1,
                        List.of(CAP, REQ_BYTES, LIM_BYTES, PARAMS, MUTABLE_PARAMS, SOURCE_VOLUME, SOURCE_SNAPSHOT), ControllerVerbs::createVolume),
                Verb.of(S, "delete-volume", List.of("d", "rm", "del", "delete"), "DeleteVolume", "VOLUME_ID...", 1, -1,
                        List.of(), ControllerVerbs::deleteVolume),
                Verb.of(S, "list-volumes", List.of("ls", "list", "volumes"), "ListVolumes", "", 0, 0,
                        List.of(MAX_ENTRIES, STARTING_TOKEN, PAGING), ControllerVerbs::listVolumes),
                Verb.of(S, "validate-volume-capabilities", List.of("validate"), "ValidateVolumeCapabilities", "VOLUME_ID...", 1, -1,
                        List.of(CAP, PARAMS, VOL_CONTEXT), ControllerVerbs::validate),
                Verb.of(S, "get-capacity", List.of("capacity"), "GetCapacity", "", 0, 0, List.of(CAP, PARAMS),
                        ControllerVerbs::getCapacity),
                Verb.of(S, "get-capabilities", List.of("capabilities"), "ControllerGetCapabilities", "", 0, 0, List.of(),
                        ControllerVerbs::getCapabilities),
                Verb.of(S, "expand-volume", List.of("exp", "expand"), "ControllerExpandVolume", "VOLUME_ID...", 1, -1,
                        List.of(REQ_BYTES, LIM_BYTES, CAP), ControllerVerbs::expandVolume),
                Verb.of(S, "create-snapshot", List.of("s", "snap"), "CreateSnapshot", "NAME...", 1, -1,
                        List.of(SOURCE_VOLUME, PARAMS), ControllerVerbs::createSnapshot),
                Verb.of(S, "delete-snapshot", List.of("ds", "delsnap"), "DeleteSnapshot", "SNAPSHOT_ID...", 1, -1, List.of(),
                        ControllerVerbs::deleteSnapshot),
                Verb.of(S, "list-snapshots", List.of("sl", "snap-list", "snapshots"), "ListSnapshots", "", 0, 0,
                        List.of(MAX_ENTRIES, STARTING_TOKEN, PAGING, SOURCE_VOLUME, SNAPSHOT_ID), ControllerVerbs::listSnapshots),
                Verb.of(S, "get-volume", List.of("gv"), "ControllerGetVolume", "VOLUME_ID...", 1, -1, List.of(),
                        ControllerVerbs::getVolume),
                Verb.of(S, "modify-volume", List.of("modify"), "ControllerModifyVolume", "VOLUME_ID...", 1, -1, List.of(MUTABLE_PARAMS),
                        ControllerVerbs::modifyVolume));
    }

    private static void createVolume(Verb.Call c) throws UsageException {
        Options o = c.opt();
        CreateVolumeRequest.Builder req = CreateVolumeRequest.newBuilder().addAllVolumeCapabilities(o.caps).putAllParameters(o.params)
                .putAllMutableParams(o.mutableParams);
        o.capacityRange.ifPresent(req::setCapacityRange);
        if (!o.sourceVolume.isEmpty() && !o.sourceSnapshot.isEmpty()) {
            throw new UsageException("--source-volume and --source-snapshot exclude each other: a volume has one content source");
        }
        if (!o.sourceVolume.isEmpty()) {
            req.setVolumeContentSource(VolumeContentSource.newBuilder()
                    .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(o.sourceVolume)));
        } else if (!o.sourceSnapshot.isEmpty()) {
            req.setVolumeContentSource(VolumeContentSource.newBuilder()
                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(o.sourceSnapshot)));
        }
        for (String name : c.args()) {
            CreateVolumeResponse r = c.csi().controller().createVolume(req.setName(name).build());
            c.out().emit(r, () -> Lines.volume(r.getVolume()));
        }
    }

    /** The volume ID per volume modified. */
    private static void modifyVolume(Verb.Call c) throws UsageException {
        Options o = c.opt();
        if (o.mutableParams.isEmpty()) {
            throw new UsageException("'controller modify-volume' needs --mutable-params K=V (provisioning=thin|thick, directIO=auto|on|off)");
        }
        for (String id : c.args()) {
            ControllerModifyVolumeResponse r = c.csi().controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder()
                    .setVolumeId(id).putAllMutableParameters(o.mutableParams).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    private static void deleteVolume(Verb.Call c) {
        for (String id : c.args()) {
            DeleteVolumeResponse r = c.csi().controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    /** Volume lines, then {@code token="..."} when there is a next page; with --paging, every page and no token. */
    private static void listVolumes(Verb.Call c) {
        Options o = c.opt();
        ListVolumesRequest.Builder req = ListVolumesRequest.newBuilder().setMaxEntries(o.maxEntries).setStartingToken(o.startingToken);
        String next;
        do {
            ListVolumesResponse page = c.csi().controller().listVolumes(req.build());
            c.out().emit(page, () -> {
                StringBuilder b = new StringBuilder();
                page.getEntriesList().forEach(e -> b.append(Lines.volume(e.getVolume())));
                return b.append(o.paging ? "" : Lines.token(page.getNextToken())).toString();
            });
            next = page.getNextToken();
            req.setStartingToken(next);
        } while (o.paging && !next.isEmpty());
    }

    private static void validate(Verb.Call c) {
        Options o = c.opt();
        ValidateVolumeCapabilitiesRequest.Builder req = ValidateVolumeCapabilitiesRequest.newBuilder()
                .addAllVolumeCapabilities(o.caps).putAllParameters(o.params).putAllVolumeContext(o.volumeContext);
        for (String id : c.args()) {
            ValidateVolumeCapabilitiesResponse r = c.csi().controller().validateVolumeCapabilities(req.setVolumeId(id).build());
            c.out().emit(r, () -> Lines.validation(id, r.hasConfirmed(), r.getMessage()));
        }
    }

    /** {@code available_capacity}, a number of bytes. */
    private static void getCapacity(Verb.Call c) {
        Options o = c.opt();
        GetCapacityResponse r = c.csi().controller().getCapacity(GetCapacityRequest.newBuilder()
                .addAllVolumeCapabilities(o.caps).putAllParameters(o.params).build());
        c.out().emit(r, () -> r.getAvailableCapacity() + "\n");
    }

    /** One RPC capability name per line. */
    private static void getCapabilities(Verb.Call c) {
        ControllerGetCapabilitiesResponse r = c.csi().controller()
                .controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance());
        c.out().emit(r, () -> {
            StringBuilder b = new StringBuilder();
            for (ControllerServiceCapability cap : r.getCapabilitiesList()) {
                if (cap.hasRpc()) {
                    b.append(cap.getRpc().getType()).append('\n');
                }
            }
            return b.toString();
        });
    }

    /** The new {@code capacity_bytes} per volume. */
    private static void expandVolume(Verb.Call c) throws UsageException {
        Options o = c.opt();
        ControllerExpandVolumeRequest.Builder req = ControllerExpandVolumeRequest.newBuilder();
        o.capacityRange.ifPresent(req::setCapacityRange);
        o.singleCap().ifPresent(req::setVolumeCapability);
        for (String id : c.args()) {
            ControllerExpandVolumeResponse r = c.csi().controller().controllerExpandVolume(req.setVolumeId(id).build());
            c.out().emit(r, () -> r.getCapacityBytes() + "\n");
        }
    }

    private static void createSnapshot(Verb.Call c) throws UsageException {
        Options o = c.opt();
        if (o.sourceVolume.isEmpty()) {
            throw new UsageException("'controller create-snapshot' needs --source-volume VOLUME_ID");
        }
        CreateSnapshotRequest.Builder req = CreateSnapshotRequest.newBuilder().setSourceVolumeId(o.sourceVolume).putAllParameters(o.params);
        for (String name : c.args()) {
            CreateSnapshotResponse r = c.csi().controller().createSnapshot(req.setName(name).build());
            c.out().emit(r, () -> Lines.snapshot(r.getSnapshot()));
        }
    }

    private static void deleteSnapshot(Verb.Call c) {
        for (String id : c.args()) {
            DeleteSnapshotResponse r = c.csi().controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build());
            c.out().emit(r, () -> id + "\n");
        }
    }

    /** Snapshot lines, then {@code token="..."} when there is a next page; with --paging, every page and no token. */
    private static void listSnapshots(Verb.Call c) {
        Options o = c.opt();
        ListSnapshotsRequest.Builder req = ListSnapshotsRequest.newBuilder().setMaxEntries(o.maxEntries).setStartingToken(o.startingToken)
                .setSourceVolumeId(o.sourceVolume).setSnapshotId(o.snapshotId);
        String next;
        do {
            ListSnapshotsResponse page = c.csi().controller().listSnapshots(req.build());
            c.out().emit(page, () -> {
                StringBuilder b = new StringBuilder();
                page.getEntriesList().forEach(e -> b.append(Lines.snapshot(e.getSnapshot())));
                return b.append(o.paging ? "" : Lines.token(page.getNextToken())).toString();
            });
            next = page.getNextToken();
            req.setStartingToken(next);
        } while (o.paging && !next.isEmpty());
    }

    private static void getVolume(Verb.Call c) {
        for (String id : c.args()) {
            ControllerGetVolumeResponse r = c.csi().controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
            c.out().emit(r, () -> Lines.volumeWithStatus(r));
        }
    }
}
