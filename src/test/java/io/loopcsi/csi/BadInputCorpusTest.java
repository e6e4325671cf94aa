package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import csi.v1.CapacityRange;
import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.ListSnapshotsRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.NodeExpandVolumeRequest;
import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.ProbeRequest;
import csi.v1.ValidateVolumeCapabilitiesRequest;
import csi.v1.VolumeCapability;
import csi.v1.VolumeCapability.AccessMode.Mode;
import csi.v1.VolumeContentSource;
import io.grpc.Status.Code;
import io.grpc.StatusRuntimeException;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * A table of malformed requests: each gets its precise status code, the driver stays up, and no
 * file outside the pool directory and the given target paths is created, changed or removed.
 */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class BadInputCorpusTest extends CsiTestBase {

    record Case(String what, Code expected, Runnable call) {
    }

    static final long MIB = Csi.MIB;

    @Test
    void everyMalformedRequestGetsItsPreciseCodeAndTouchesNothing() throws Exception {
        String xfs = createVolume("corpus-xfs", Csi.mount("xfs"), 300 * MIB);
        String blk = createVolume("corpus-blk", Csi.block(), 8 * MIB);
        Path root = StandaloneDriverResource.dir();
        Path evil = Files.createSymbolicLink(mnt.resolve("evil"), Path.of("/etc"));
        Path pool = root.resolve("pool");
        String s = mnt.resolve("s").toString();
        String t = mnt.resolve("t").toString();
        List<String> before = tree(root);
        boolean etcHadIt = Files.exists(Path.of("/etc/loopcsi-corpus"));

        List<Case> cases = new ArrayList<>();
        // IDs
        for (String bad : List.of("vol-/../../etc", "..", "../" + xfs, xfs + "/x", "vol-\u0000abc", "x".repeat(10_000),
                xfs.toUpperCase(), " " + xfs, "vol-0123", "snap-0123456789abcdef0123456789abcdef")) {
            Code stageCode = bad.length() > 128 || bad.indexOf('\0') >= 0 ? Code.INVALID_ARGUMENT : Code.NOT_FOUND;
            cases.add(new Case("stage id " + bad.length(), stageCode, () -> stage(bad, Path.of(s), Csi.block())));
            cases.add(new Case("expand id " + bad.length(), stageCode, () -> csi.controller.controllerExpandVolume(
                    ControllerExpandVolumeRequest.newBuilder().setVolumeId(bad).setCapacityRange(range(MIB, 0)).build())));
            cases.add(new Case("snapshot source " + bad.length(), stageCode, () -> csi.controller.createSnapshot(
                    CreateSnapshotRequest.newBuilder().setName("corpus-snap").setSourceVolumeId(bad).build())));
        }
        cases.add(new Case("delete 10 KB id", Code.INVALID_ARGUMENT,
                () -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("v".repeat(10_240)).build())));
        cases.add(new Case("delete empty id", Code.INVALID_ARGUMENT, () -> csi.controller.deleteVolume(DeleteVolumeRequest.getDefaultInstance())));
        // paths
        for (String bad : List.of("relative/t", "t", "/a/../b", "/a/./b", "//a//b", "", evil + "/loopcsi-corpus",
                "/etc/loopcsi-corpus", pool + "/volumes/x", pool.toString(), "/tmp/x\u0000y", "/" + "p".repeat(5000))) {
            cases.add(new Case("stage path " + abbreviate(bad), Code.INVALID_ARGUMENT, () -> csi.node.nodeStageVolume(
                    NodeStageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(bad).setVolumeCapability(Csi.mount("xfs")).build())));
            cases.add(new Case("publish target " + abbreviate(bad), Code.INVALID_ARGUMENT, () -> csi.node.nodePublishVolume(
                    NodePublishVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(s).setTargetPath(bad)
                            .setVolumeCapability(Csi.mount("xfs")).build())));
            cases.add(new Case("unpublish target " + abbreviate(bad), Code.INVALID_ARGUMENT, () -> csi.node.nodeUnpublishVolume(
                    NodeUnpublishVolumeRequest.newBuilder().setVolumeId(xfs).setTargetPath(bad).build())));
        }
        cases.add(new Case("unstage outside roots", Code.INVALID_ARGUMENT, () -> csi.node.nodeUnstageVolume(
                NodeUnstageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath("/etc").build())));
        cases.add(new Case("stats outside roots", Code.INVALID_ARGUMENT, () -> csi.node.nodeGetVolumeStats(
                NodeGetVolumeStatsRequest.newBuilder().setVolumeId(xfs).setVolumePath("/etc").build())));
        cases.add(new Case("node expand outside roots", Code.INVALID_ARGUMENT, () -> csi.node.nodeExpandVolume(
                NodeExpandVolumeRequest.newBuilder().setVolumeId(xfs).setVolumePath("/proc").build())));
        cases.add(new Case("publish target == staging", Code.INVALID_ARGUMENT, () -> csi.node.nodePublishVolume(
                NodePublishVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(s).setTargetPath(s)
                        .setVolumeCapability(Csi.mount("xfs")).build())));
        // capacities
        for (long[] r : new long[][] { { -1, 0 }, { 0, -1 }, { Long.MIN_VALUE, 0 }, { 10 * MIB, MIB } }) {
            cases.add(new Case("capacity " + r[0] + ".." + r[1], Code.INVALID_ARGUMENT,
                    () -> csi.controller.createVolume(Csi.create("corpus-cap", Csi.block(), 0).toBuilder().setCapacityRange(range(r[0], r[1])).build())));
        }
        cases.add(new Case("capacity Long.MAX", Code.OUT_OF_RANGE, () -> csi.controller.createVolume(Csi.create("corpus-max", Csi.block(), Long.MAX_VALUE))));
        cases.add(new Case("capacity 2^60", Code.OUT_OF_RANGE, () -> csi.controller.createVolume(Csi.create("corpus-huge", Csi.block(), 1L << 60))));
        cases.add(new Case("more than the pool", Code.RESOURCE_EXHAUSTED, () -> csi.controller.createVolume(Csi.create("corpus-big", Csi.block(), 1L << 45))));
        cases.add(new Case("xfs under its minimum limit", Code.OUT_OF_RANGE, () -> csi.controller.createVolume(Csi.create("corpus-xs", Csi.mount("xfs"), 0)
                .toBuilder().setCapacityRange(range(MIB, 100 * MIB)).build())));
        cases.add(new Case("expand below zero", Code.INVALID_ARGUMENT, () -> csi.controller.controllerExpandVolume(
                ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfs).setCapacityRange(range(-5, 0)).build())));
        cases.add(new Case("expand above limit", Code.OUT_OF_RANGE, () -> csi.controller.controllerExpandVolume(
                ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfs).setCapacityRange(range(0, 100 * MIB)).build())));
        // fs types and mount flags
        for (String fs : List.of("btrfs", "xfs,ext4", "../xfs", "XFS", "nfs")) {
            cases.add(new Case("fs " + fs, Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-fs", Csi.mount(fs), 300 * MIB))));
        }
        for (String flag : List.of("ro,exec", "noatime suid", "loop", "offset=0", "sizelimit=1", "x-mount.mkdir", "X-foo", "remount",
                "bind", "", "a\u0000b", "uid=0;rm")) {
            cases.add(new Case("mount flag " + abbreviate(flag), Code.INVALID_ARGUMENT,
                    () -> stage(xfs, Path.of(s), Csi.mount("xfs", flag))));
        }
        // capabilities
        cases.add(new Case("no capabilities", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(CreateVolumeRequest.newBuilder()
                .setName("corpus-nocap").build())));
        cases.add(new Case("no access type", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-notype",
                VolumeCapability.newBuilder().setAccessMode(Csi.mode(Mode.SINGLE_NODE_WRITER)).build(), MIB))));
        cases.add(new Case("no access mode", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-nomode",
                Csi.block().toBuilder().clearAccessMode().build(), MIB))));
        cases.add(new Case("multi-node writer", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-mnw",
                Csi.block().toBuilder().setAccessMode(Csi.mode(Mode.MULTI_NODE_MULTI_WRITER)).build(), MIB))));
        cases.add(new Case("block and mount", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-mix", Csi.block(), MIB)
                .toBuilder().addVolumeCapabilities(Csi.mount("xfs")).build())));
        cases.add(new Case("xfs and ext4", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-2fs", Csi.mount("xfs"), 300 * MIB)
                .toBuilder().addVolumeCapabilities(Csi.mount("ext4")).build())));
        cases.add(new Case("stage block volume as mount", Code.FAILED_PRECONDITION, () -> stage(blk, Path.of(s), Csi.mount("xfs"))));
        cases.add(new Case("stage xfs volume as ext4", Code.FAILED_PRECONDITION, () -> stage(xfs, Path.of(s), Csi.mount("ext4"))));
        cases.add(new Case("stage without capability", Code.INVALID_ARGUMENT, () -> csi.node.nodeStageVolume(
                NodeStageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(s).build())));
        cases.add(new Case("volume_mount_group", Code.INVALID_ARGUMENT, () -> stage(xfs, Path.of(s), Csi.mount("xfs").toBuilder()
                .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("xfs").setVolumeMountGroup("1000")).build())));
        cases.add(new Case("validate without capabilities", Code.INVALID_ARGUMENT, () -> csi.controller.validateVolumeCapabilities(
                ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(xfs).build())));
        cases.add(new Case("restore into another mode", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-x", Csi.block(), 300 * MIB)
                .toBuilder().setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(xfs))).build())));
        cases.add(new Case("empty content source", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("corpus-y", Csi.block(), MIB)
                .toBuilder().setVolumeContentSource(VolumeContentSource.getDefaultInstance()).build())));
        // names, tokens, conflicts
        cases.add(new Case("control character in name", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("a\u0007b", Csi.block(), MIB))));
        cases.add(new Case("129-byte name", Code.INVALID_ARGUMENT, () -> csi.controller.createVolume(Csi.create("n".repeat(129), Csi.block(), MIB))));
        cases.add(new Case("same name, other size", Code.ALREADY_EXISTS, () -> csi.controller.createVolume(Csi.create("corpus-blk", Csi.block(), 16 * MIB))));
        cases.add(new Case("bad list token", Code.ABORTED, () -> csi.controller.listVolumes(ListVolumesRequest.newBuilder().setStartingToken("../x").build())));
        cases.add(new Case("bad snapshot token", Code.ABORTED, () -> csi.controller.listSnapshots(ListSnapshotsRequest.newBuilder().setStartingToken("x").build())));
        cases.add(new Case("negative max_entries", Code.INVALID_ARGUMENT, () -> csi.controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(-3).build())));
        // an fs_type the driver cannot make is a capacity of 0 (RequestErrorTableTest); a capability without access type is malformed
        cases.add(new Case("capacity with a capability of no access type", Code.INVALID_ARGUMENT, () -> csi.controller.getCapacity(
                GetCapacityRequest.newBuilder().addVolumeCapabilities(Csi.block().toBuilder().clearBlock()).build())));
        cases.add(new Case("publish before stage", Code.FAILED_PRECONDITION, () -> publish(xfs, Path.of(s), Path.of(t), Csi.mount("xfs"), false)));

        List<String> wrong = new ArrayList<>();
        for (Case c : cases) {
            try {
                c.call().run();
                wrong.add(c.what() + ": succeeded, expected " + c.expected());
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != c.expected()) {
                    wrong.add(c.what() + ": " + e.getStatus() + ", expected " + c.expected());
                }
            }
        }
        assertTrue(cases.size() >= 50, "corpus of " + cases.size());
        assertEquals(List.of(), wrong, wrong.size() + " of " + cases.size() + " cases answered wrongly");
        assertTrue(csi.identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue(), "the driver is still up");
        assertEquals(before, tree(root), "nothing created, changed or removed");
        assertEquals(etcHadIt, Files.exists(Path.of("/etc/loopcsi-corpus")));
        assertFalse(isMountPoint(Path.of(s)));
        System.out.println("bad-input corpus: " + cases.size() + " requests, each answered with its expected code");
    }

    private static CapacityRange range(long required, long limit) {
        return CapacityRange.newBuilder().setRequiredBytes(required).setLimitBytes(limit).build();
    }

    private static String abbreviate(String s) {
        String v = s.replace("\u0000", "\\0");
        return v.length() > 40 ? v.substring(0, 40) + "...(" + v.length() + ")" : v;
    }

    /** Every path under root with its size and modification time, sockets excluded. */
    private static List<String> tree(Path root) throws Exception {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> !p.toString().endsWith(".sock"))
                    .map(p -> {
                        try {
                            return p + " " + (Files.isRegularFile(p) ? Files.size(p) + " " + Files.getLastModifiedTime(p) : "");
                        } catch (Exception e) {
                            return p + " ?";
                        }
                    }).sorted().toList();
        }
    }
}
