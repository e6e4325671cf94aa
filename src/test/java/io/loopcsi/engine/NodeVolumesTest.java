package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.GIB;
import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.blkidType;
import static io.loopcsi.engine.Rig.expect;
import static io.loopcsi.engine.Rig.mountsAt;
import static io.loopcsi.testing.Data.randomBytes;
import static io.loopcsi.testing.Data.readAt;
import static io.loopcsi.engine.Rig.sha256;
import static io.loopcsi.testing.Data.writeAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;
import io.loopcsi.testing.KernelCleanup;

/** The node side on real loop devices, real mkfs and real (bind) mounts. */
class NodeVolumesTest extends KernelTestDirs {

    private static final List<String> NO_FLAGS = List.of();

    private Rig rig;
    private NodeVolumes node;

    @BeforeEach
    void setUp() throws Exception {
        rig = new Rig(dir.resolve("pool"), 64 * GIB);
        node = rig.node;
    }

    private Path staging(String name) {
        return dir.resolve("plugins/staging").resolve(name);
    }

    private Path target(String pod) {
        return dir.resolve("pods").resolve(pod).resolve("mount");
    }

    private void stageAndPublish(VolumeMeta v, Path staging, Path target, boolean readOnly) {
        node.stage(v.id(), staging, v.mode(), v.fsType(), NO_FLAGS, false);
        node.publish(v.id(), staging, target, v.mode(), v.fsType(), NO_FLAGS, readOnly);
    }

    private List<String> loopsOfThisTest() {
        return KernelCleanup.loopDevicesUnder(dir);
    }

    // ---- loop devices ----------------------------------------------------------------------

    /**
     * Another opener holds the device at unstage (here this JVM; in a cluster, a copy of the volume's
     * mount in a container's own mount namespace): the unstage succeeds, the kernel detaches the
     * device when that opener lets go, and until then DeleteVolume refuses and says why.
     */
    @Test
    void aDeviceHeldElsewhereAtUnstageGoesWhenReleasedAndDeleteWaitsForIt() throws Exception {
        VolumeMeta v = rig.block("pvc-held", 16 * MIB);
        Path staging = staging("held");
        node.stage(v.id(), staging, v.mode(), "", NO_FLAGS, false);
        String dev = rig.loops.find(rig.image(v)).orElseThrow();
        try (var holder = java.nio.channels.FileChannel.open(Path.of(dev), StandardOpenOption.READ)) {
            node.unstage(v.id(), staging);
            assertTrue(rig.loops.pendingDetach(dev), "detach asked, deferred by the kernel");
            EngineException e = expect(Kind.FAILED_PRECONDITION, () -> rig.engine.deleteVolume(v.id()));
            assertTrue(e.getMessage().contains("still open elsewhere") && e.getMessage().contains(dev), e.getMessage());
            assertTrue(Files.exists(rig.image(v)), "nothing deleted");
        }
        rig.engine.deleteVolume(v.id()); // the holder let go: the device went with it
        assertEquals(List.of(), loopsOfThisTest());
        assertFalse(Files.exists(rig.image(v)));
    }

    @Test
    void findOrAttachNeverGivesOneFileASecondDevice() {
        VolumeMeta v = rig.block("pvc-loop", 16 * MIB);
        Path image = rig.image(v);
        assertEquals(Optional.empty(), rig.loops.find(image));
        String dev = rig.loops.findOrAttach(image, false);
        assertTrue(dev.startsWith("/dev/loop"), dev);
        assertEquals(dev, rig.loops.findOrAttach(image, false));
        assertEquals(Optional.of(dev), rig.loops.find(image));
        assertEquals(List.of(dev), loopsOfThisTest());
        assertEquals(16 * MIB, rig.loops.sizeBytes(dev));

        // a growing image is seen by its device after a refresh
        rig.engine.expandVolume(v.id(), 32 * MIB, 0);
        assertEquals(32 * MIB, rig.loops.sizeBytes(dev), "expanding an attached volume refreshes its device");

        rig.loops.detach(dev);
        assertEquals(Optional.empty(), rig.loops.find(image));
        assertEquals(List.of(), loopsOfThisTest());
    }

    // ---- filesystem volumes ----------------------------------------------------------------

    @Test
    void xfsIsMadeOnceAndDataSurvivesUnstageAndStageAgain() throws Exception {
        VolumeMeta v = rig.fs("pvc-xfs", "xfs", 300 * MIB);
        Path staging = staging("pvc-xfs");
        Path target = target("pod-a");
        stageAndPublish(v, staging, target, false);

        String dev = rig.loops.find(rig.image(v)).orElseThrow();
        assertEquals("xfs", blkidType(Path.of(dev)));
        String uuid = Rig.RUNNER.run("blkid", "--probe", "--match-tag", "UUID", "--output", "value", dev).strip();
        MountTable.Entry staged = mountsAt(staging).get(0);
        assertEquals("xfs", staged.fsType());
        assertEquals(dev, staged.source());

        Path file = target.resolve("data/hello.bin");
        Files.createDirectories(file.getParent());
        Files.write(file, randomBytes(256 * 1024, 10));
        String sum = sha256(file);
        assertTrue(Files.exists(staging.resolve("data/hello.bin")), "the target is a bind mount of the staged filesystem");

        node.unpublish(v.id(), target);
        assertEquals(List.of(), mountsAt(target));
        assertFalse(Files.exists(target), "unpublish removes the target path");
        node.unstage(v.id(), staging);
        assertEquals(List.of(), mountsAt(staging));
        assertEquals(List.of(), loopsOfThisTest(), "unstage detaches the loop device");

        stageAndPublish(v, staging, target("pod-b"), false);
        Path again = target("pod-b").resolve("data/hello.bin");
        assertTrue(Files.exists(again));
        assertEquals(sum, sha256(again));
        String dev2 = rig.loops.find(rig.image(v)).orElseThrow();
        assertEquals(uuid, Rig.RUNNER.run("blkid", "--probe", "--match-tag", "UUID", "--output", "value", dev2).strip(),
                "the filesystem was not made again");
    }

    @Test
    void stageAndPublishAreIdempotent() throws Exception {
        VolumeMeta v = rig.fs("pvc-idem", "xfs", 300 * MIB);
        Path staging = staging("pvc-idem");
        Path target = target("pod-idem");
        node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false);
        Files.writeString(staging.resolve("marker"), "x");
        node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "", NO_FLAGS, false);
        assertEquals(1, loopsOfThisTest().size());
        assertEquals(1, mountsAt(staging).size());
        assertEquals("x", Files.readString(staging.resolve("marker")), "a second stage neither remounts nor reformats");

        node.publish(v.id(), staging, target, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false);
        node.publish(v.id(), staging, target, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false);
        assertEquals(1, mountsAt(target).size());
        expect(Kind.ALREADY_EXISTS, () -> node.publish(v.id(), staging, target, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, true));
        assertEquals(1, mountsAt(target).size());

        // another volume cannot be staged or published on top
        VolumeMeta other = rig.fs("pvc-other", "xfs", 300 * MIB);
        expect(Kind.ALREADY_EXISTS, () -> node.stage(other.id(), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false));
        assertEquals(1, mountsAt(staging).size());
    }

    @Test
    void wrongModeOrFilesystemAndPublishBeforeStageAreRefused() {
        VolumeMeta v = rig.fs("pvc-mode", "xfs", 300 * MIB);
        Path staging = staging("pvc-mode");
        expect(Kind.FAILED_PRECONDITION, () -> node.stage(v.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false));
        expect(Kind.FAILED_PRECONDITION, () -> node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "ext4", NO_FLAGS, false));
        assertEquals(List.of(), loopsOfThisTest(), "a refused stage attaches nothing");
        expect(Kind.FAILED_PRECONDITION,
                () -> node.publish(v.id(), staging, target("p"), VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false));
        expect(Kind.NOT_FOUND, () -> node.stage(Ids.volumeIdFor("ghost"), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false));
        assertFalse(Files.exists(target("p")));
    }

    @Test
    void aDeviceHoldingSomethingElseIsNeverFormatted() throws Exception {
        VolumeMeta v = rig.fs("pvc-foreign", "xfs", 300 * MIB);
        Rig.RUNNER.run("mkfs.ext4", "-q", "-F", rig.image(v).toString());
        Path staging = staging("pvc-foreign");
        EngineException e = expect(Kind.FAILED_PRECONDITION,
                () -> node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false));
        assertTrue(e.getMessage().contains("ext4"), e.getMessage());
        assertEquals("ext4", blkidType(rig.image(v)));
        assertEquals(List.of(), mountsAt(staging));
        node.unstage(v.id(), staging);
        assertEquals(List.of(), loopsOfThisTest());
    }

    @Test
    void readOnlyPublishCannotBeWritten() throws Exception {
        VolumeMeta v = rig.fs("pvc-ro", "xfs", 300 * MIB);
        Path staging = staging("pvc-ro");
        Path rw = target("writer");
        Path ro = target("reader");
        stageAndPublish(v, staging, rw, false);
        node.publish(v.id(), staging, ro, VolumeMode.FILESYSTEM, "xfs", List.of("noatime"), true);

        assertTrue(mountsAt(ro).get(0).readOnly());
        assertFalse(mountsAt(rw).get(0).readOnly());
        assertFalse(mountsAt(staging).get(0).readOnly(), "read-only applies to that publish only");
        IOException e = assertThrows(IOException.class, () -> Files.writeString(ro.resolve("nope"), "x"));
        assertTrue(String.valueOf(e.getMessage()).contains("Read-only") || e instanceof java.nio.file.FileSystemException, e.toString());
        Files.writeString(rw.resolve("shared"), "from the writer");
        assertEquals("from the writer", Files.readString(ro.resolve("shared")));
        assertThrows(IOException.class, () -> Files.delete(ro.resolve("shared")));
    }

    @Test
    void unstageWhilePublishedIsRefusedAndRepeatedTeardownIsFine() throws Exception {
        VolumeMeta v = rig.fs("pvc-order", "xfs", 300 * MIB);
        Path staging = staging("pvc-order");
        Path target = target("pod-order");
        stageAndPublish(v, staging, target, false);
        EngineException e = expect(Kind.FAILED_PRECONDITION, () -> node.unstage(v.id(), staging));
        assertTrue(e.getMessage().contains(target.toString()), e.getMessage());
        assertEquals(1, mountsAt(staging).size());
        assertEquals(1, mountsAt(target).size());
        expect(Kind.FAILED_PRECONDITION, () -> rig.engine.deleteVolume(v.id()));

        node.unpublish(v.id(), target);
        node.unpublish(v.id(), target);
        node.unstage(v.id(), staging);
        node.unstage(v.id(), staging);
        assertEquals(List.of(), loopsOfThisTest());
        assertEquals(List.of(), mountsAt(staging));
        rig.engine.deleteVolume(v.id());
        assertEquals(Optional.empty(), rig.engine.volume(v.id()));
    }

    @Test
    void unpublishLeavesAForeignMountAlone() throws Exception {
        VolumeMeta a = rig.fs("pvc-a", "xfs", 300 * MIB);
        VolumeMeta b = rig.fs("pvc-b", "xfs", 300 * MIB);
        stageAndPublish(a, staging("a"), target("pod-a"), false);
        stageAndPublish(b, staging("b"), target("pod-b"), false);
        expect(Kind.FAILED_PRECONDITION, () -> node.unpublish(a.id(), target("pod-b")));
        assertEquals(1, mountsAt(target("pod-b")).size());
        expect(Kind.FAILED_PRECONDITION, () -> node.unstage(a.id(), staging("b")));
        assertEquals(1, mountsAt(staging("b")).size());
    }

    @Test
    void onlineExpansionGrowsTheMountedXfsAndKeepsItsData() throws Exception {
        VolumeMeta v = rig.fs("pvc-expand", "xfs", 300 * MIB);
        Path staging = staging("pvc-expand");
        Path target = target("pod-expand");
        stageAndPublish(v, staging, target, false);
        Path file = target.resolve("keep.bin");
        Files.write(file, randomBytes(128 * 1024, 11));
        String sum = sha256(file);
        long before = rig.filesystems.usage(target).totalBytes();

        assertEquals(600 * MIB, rig.engine.expandVolume(v.id(), 600 * MIB, 0).capacityBytes());
        assertEquals(600 * MIB, node.expand(v.id(), target));

        long after = rig.filesystems.usage(target).totalBytes();
        assertTrue(after > before + 250 * MIB, before + " -> " + after);
        assertEquals(sum, sha256(file));
        VolumeStats s = node.stats(v.id(), target);
        assertEquals(after, s.totalBytes());
        expect(Kind.NOT_FOUND, () -> node.expand(v.id(), dir));
    }

    @Test
    void aSnapshotOfAMountedXfsRestoresAndClonesBesideItsSource() throws Exception {
        VolumeMeta src = rig.fs("pvc-src", "xfs", 300 * MIB);
        Path srcTarget = target("pod-src");
        stageAndPublish(src, staging("pvc-src"), srcTarget, false);
        Path file = srcTarget.resolve("state.txt");
        Files.writeString(file, "version 1");

        SnapshotMeta snap = rig.engine.createSnapshot("snap-src", src.id()); // taken while mounted and in use
        Files.writeString(file, "version 2");
        Files.writeString(srcTarget.resolve("after-snapshot"), "x");

        VolumeMeta restored = rig.engine.createVolume(new CreateRequest("pvc-restored", 400 * MIB, 0, VolumeMode.FILESYSTEM, "xfs",
                snap.id(), null, Map.of()));
        Path rTarget = target("pod-restored");
        stageAndPublish(restored, staging("pvc-restored"), rTarget, false);
        assertEquals("version 1", Files.readString(rTarget.resolve("state.txt")));
        assertFalse(Files.exists(rTarget.resolve("after-snapshot")));
        long srcTotal = node.stats(src.id(), srcTarget).totalBytes();
        long restoredTotal = node.stats(restored.id(), rTarget).totalBytes();
        assertTrue(restoredTotal > srcTotal + 50 * MIB, "a larger restore fills its device: " + srcTotal + " vs " + restoredTotal);

        VolumeMeta clone = rig.engine.createVolume(new CreateRequest("pvc-clone", 300 * MIB, 0, VolumeMode.FILESYSTEM, "xfs",
                null, src.id(), Map.of()));
        Path cTarget = target("pod-clone");
        stageAndPublish(clone, staging("pvc-clone"), cTarget, false);
        assertEquals("version 2", Files.readString(cTarget.resolve("state.txt")));

        // all three are mounted at once and independent
        Files.writeString(rTarget.resolve("state.txt"), "restored edit");
        assertEquals("version 2", Files.readString(file));
        assertEquals("version 2", Files.readString(cTarget.resolve("state.txt")));
        Files.writeString(file, "version 3"); // the source is writable again after the freeze
        assertEquals("version 3", Files.readString(file));
        assertEquals(3, loopsOfThisTest().size());
    }

    /**
     * Issue 35: a cross-node clone reads a copy of its source made at one instant, frozen as a
     * same-node clone is: what the pod wrote and the filesystem still held in memory is in it, what
     * it writes after is not, and the copy stays the same until the transfer ends.
     */
    @Test
    void aTransferReadsAPointInTimeCopyOfAMountedXfs() throws Exception {
        VolumeMeta src = rig.fs("pvc-live", "xfs", 300 * MIB);
        Path srcTarget = target("pod-live");
        stageAndPublish(src, staging("pvc-live"), srcTarget, false);
        Path file = srcTarget.resolve("state.txt");
        Files.writeString(file, "version 1"); // in the page cache: no sync

        Path copy = rig.engine.transferCopy(src.id(), "vol-transfer-1");
        Files.writeString(file, "version 2");
        assertEquals(copy, rig.engine.transferCopy(src.id(), "vol-transfer-1"), "the copy a transfer reads is made once");
        assertEquals(java.util.Set.of("vol-transfer-1"), rig.engine.transferCopies());

        // clean on disk without log recovery: the freeze wrote the log out and quiesced it
        Path seen = dir.resolve("seen");
        Files.createDirectories(seen);
        Rig.RUNNER.run("mount", "-o", "ro,loop,nouuid,norecovery", copy.toString(), seen.toString());
        try {
            assertEquals("version 1", Files.readString(seen.resolve("state.txt")));
        } finally {
            Rig.RUNNER.run("umount", seen.toString());
        }
        assertEquals("version 2", Files.readString(file), "the source is writable after the freeze");

        rig.engine.dropTransferCopy("vol-transfer-1");
        assertFalse(Files.exists(copy));
        assertEquals(java.util.Set.of(), rig.engine.transferCopies());
        rig.engine.dropTransferCopy("vol-transfer-1"); // nothing left: nothing to do
        assertThrows(EngineException.class, () -> rig.engine.transferCopy(src.id(), "../volumes/x"));
    }

    /**
     * Issue 35: a transfer's copy is a full copy while it lasts, charged as a snapshot is, so that it
     * never takes room promised to the pool's volumes; one that does not fit is refused before
     * anything is written.
     */
    @Test
    void aTransfersCopyIsChargedAsASnapshotWhileItLasts() throws Exception {
        Rig small = new Rig(dir.resolve("small-pool"), 700 * MIB);
        VolumeMeta src = small.block("pvc-src", 300 * MIB);
        assertEquals(400 * MIB, small.engine.capacity().available(true));

        small.engine.transferCopy(src.id(), "vol-transfer-1");
        assertEquals(100 * MIB, small.engine.capacity().available(true), "the copy is charged its full size");
        EngineException e = Rig.expect(EngineException.Kind.RESOURCE_EXHAUSTED,
                () -> small.engine.transferCopy(src.id(), "vol-transfer-2"));
        assertTrue(e.getMessage().contains("not enough space on node node-1"), e.getMessage());
        assertEquals(java.util.Set.of("vol-transfer-1"), small.engine.transferCopies(), "nothing written for the refused copy");
        assertEquals(List.of("vol-transfer-1.source.img"), fileNames(small.pool.transfersDir()));
        Rig.expect(EngineException.Kind.RESOURCE_EXHAUSTED, () -> small.block("pvc-too-big", 200 * MIB));

        small.engine.dropTransferCopy("vol-transfer-1");
        assertEquals(400 * MIB, small.engine.capacity().available(true), "the charge ends with the copy");
        small.engine.transferCopy(src.id(), "vol-transfer-2");
        small.engine.dropTransferCopy("vol-transfer-2");
    }

    private static List<String> fileNames(Path d) throws IOException {
        try (var files = Files.list(d)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void ext4VolumesWorkToo() throws Exception {
        VolumeMeta v = rig.fs("pvc-ext4", "ext4", 64 * MIB);
        Path staging = staging("pvc-ext4");
        Path target = target("pod-ext4");
        stageAndPublish(v, staging, target, false);
        String dev = rig.loops.find(rig.image(v)).orElseThrow();
        assertEquals(Optional.of("ext4"), rig.filesystems.probe(dev));
        assertEquals("ext4", mountsAt(staging).get(0).fsType());
        Files.writeString(target.resolve("note.txt"), "ext4 data");

        node.unpublish(v.id(), target);
        node.unstage(v.id(), staging);
        stageAndPublish(v, staging, target, false);
        assertEquals("ext4 data", Files.readString(target.resolve("note.txt")));

        VolumeStats s = node.stats(v.id(), target);
        assertTrue(s.totalInodes() > 0 && s.freeInodes() > 0, s.toString());
        assertFalse(s.condition().abnormal(), s.toString());

        SnapshotMeta snap = rig.engine.createSnapshot("snap-ext4", v.id()); // frozen while mounted
        assertEquals("ext4", snap.sourceFsType());
        VolumeMeta restored = rig.engine.createVolume(new CreateRequest("pvc-ext4-restored", 0, 64 * MIB, VolumeMode.FILESYSTEM,
                "ext4", snap.id(), null, Map.of()));
        assertEquals(64 * MIB, restored.capacityBytes());
        Path rTarget = target("pod-ext4-restored");
        stageAndPublish(restored, staging("pvc-ext4-restored"), rTarget, false);
        assertEquals("ext4 data", Files.readString(rTarget.resolve("note.txt")));
        Files.writeString(target.resolve("note.txt"), "changed");
        assertEquals("ext4 data", Files.readString(rTarget.resolve("note.txt")));
    }

    @Test
    void ext4GrowsOnline() throws Exception {
        // resize2fs online needs CAP_SYS_RESOURCE (ext4_resize_begin), which some sandboxes drop even for root
        assumeTrue(hasCapability(24), "no CAP_SYS_RESOURCE here: ext4 cannot be grown online");
        VolumeMeta v = rig.fs("pvc-ext4-grow", "ext4", 64 * MIB);
        Path target = target("pod-ext4-grow");
        stageAndPublish(v, staging("pvc-ext4-grow"), target, false);
        Files.writeString(target.resolve("note.txt"), "ext4 data");
        long before = rig.filesystems.usage(target).totalBytes();
        rig.engine.expandVolume(v.id(), 128 * MIB, 0);
        assertEquals(128 * MIB, node.expand(v.id(), target));
        long after = rig.filesystems.usage(target).totalBytes();
        assertTrue(after > before + 50 * MIB, before + " -> " + after);
        assertEquals("ext4 data", Files.readString(target.resolve("note.txt")));
    }

    private static boolean hasCapability(int bit) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & (1L << bit)) != 0;
            }
        }
        return false;
    }

    // ---- block volumes ---------------------------------------------------------------------

    @Test
    void blockVolumeIsPublishedAsADeviceFileAndItsDataSurvives() throws Exception {
        VolumeMeta v = rig.block("pvc-raw", 16 * MIB);
        Path staging = staging("pvc-raw");
        Path target = dir.resolve("pods/pod-raw/volumeDevices/dev");
        node.stage(v.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false);
        node.stage(v.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false);
        assertEquals(1, loopsOfThisTest().size());
        node.publish(v.id(), staging, target, VolumeMode.BLOCK, "", NO_FLAGS, false);
        node.publish(v.id(), staging, target, VolumeMode.BLOCK, "", NO_FLAGS, false);
        assertEquals(1, mountsAt(target).size());
        String dev = rig.loops.find(rig.image(v)).orElseThrow();
        assertEquals(Mounter.rdev(Path.of(dev)), Mounter.rdev(target), "the target is the loop device");
        assertNotEquals(0, Mounter.rdev(target));

        byte[] data = randomBytes(8192, 12);
        writeAt(target, 5 * MIB, data);
        expect(Kind.FAILED_PRECONDITION, () -> node.unstage(v.id(), staging));
        expect(Kind.FAILED_PRECONDITION, () -> rig.engine.deleteVolume(v.id()));

        node.unpublish(v.id(), target);
        assertFalse(Files.exists(target));
        node.unpublish(v.id(), target);
        node.unstage(v.id(), staging);
        node.unstage(v.id(), staging);
        assertEquals(List.of(), loopsOfThisTest());
        assertArrayEquals(data, readAt(rig.image(v), 5 * MIB, data.length), "the data reached the image file");

        Path target2 = dir.resolve("pods/pod-raw2/volumeDevices/dev");
        node.stage(v.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false);
        node.publish(v.id(), staging, target2, VolumeMode.BLOCK, "", NO_FLAGS, false);
        assertArrayEquals(data, readAt(target2, 5 * MIB, data.length));
    }

    @Test
    void readOnlyBlockPublishCannotBeWritten() throws Exception {
        VolumeMeta v = rig.block("pvc-raw-ro", 16 * MIB);
        byte[] data = randomBytes(4096, 21);
        Files.write(rig.image(v), data, StandardOpenOption.WRITE); // what the volume held before
        Path target = dir.resolve("pods/pod-raw-ro/dev");
        node.stage(v.id(), staging("pvc-raw-ro"), VolumeMode.BLOCK, "", NO_FLAGS, true);
        node.publish(v.id(), staging("pvc-raw-ro"), target, VolumeMode.BLOCK, "", NO_FLAGS, true);
        assertThrows(IOException.class, () -> writeAt(target, 0, new byte[4096]));
        assertArrayEquals(data, readAt(target, 0, data.length));
    }

    @Test
    void readOnlyBlockPublishOfAReadWriteDeviceGetsAReadOnlyCompanion() {
        // the kernel ignores read-only bind mounts of device nodes: a read-only device is what keeps the target read-only
        VolumeMeta v = rig.block("pvc-raw-rw", 16 * MIB);
        Path image = rig.pool.volumeImage(v.id());
        node.stage(v.id(), staging("pvc-raw-rw"), VolumeMode.BLOCK, "", NO_FLAGS, false);
        Path target = dir.resolve("pods/pod-rw/dev");
        node.publish(v.id(), staging("pvc-raw-rw"), target, VolumeMode.BLOCK, "", NO_FLAGS, true);
        String companion = rig.loops.readOnlyCompanion(image).orElseThrow();
        assertTrue(rig.loops.readOnly(companion));
        assertEquals(Mounter.rdev(Path.of(companion)), Mounter.rdev(target), "the target is the read-only device");
        assertFalse(rig.loops.readOnly(rig.loops.find(image).orElseThrow()), "the volume's own device stays read-write");
        node.unpublish(v.id(), target);
        assertEquals(1, rig.loops.findAll(image).size(), "the companion goes with the last read-only target");
        node.unstage(v.id(), staging("pvc-raw-rw"));
        assertEquals(List.of(), rig.loops.findAll(image));
    }

    // ---- stats -----------------------------------------------------------------------------

    @Test
    void statsReportUsageAndCondition() throws Exception {
        VolumeMeta x = rig.fs("pvc-stats", "xfs", 300 * MIB);
        Path xTarget = target("pod-stats");
        stageAndPublish(x, staging("pvc-stats"), xTarget, false);
        VolumeStats empty = node.stats(x.id(), xTarget);
        assertFalse(empty.condition().abnormal(), empty.toString());
        assertTrue(empty.totalBytes() > 200 * MIB && empty.totalBytes() <= 300 * MIB, empty.toString()); // minus the xfs log
        assertTrue(empty.availableBytes() > 0 && empty.availableBytes() <= empty.totalBytes(), empty.toString());
        assertTrue(empty.totalInodes() > 0 && empty.freeInodes() > 0 && empty.freeInodes() <= empty.totalInodes(), empty.toString());
        Files.write(xTarget.resolve("blob"), randomBytes(4 * 1024 * 1024, 13));
        Rig.RUNNER.run("sync");
        VolumeStats used = node.stats(x.id(), xTarget);
        assertTrue(used.usedBytes() >= empty.usedBytes() + 4 * MIB, empty + " -> " + used);
        assertEquals(node.stats(x.id(), staging("pvc-stats")).totalBytes(), used.totalBytes(), "the staging path reports the same");

        Path elsewhere = Files.createDirectories(dir.resolve("not-a-mount"));
        expect(Kind.NOT_FOUND, () -> node.stats(x.id(), elsewhere)); // the spec: the volume does not exist on that path
        expect(Kind.NOT_FOUND, () -> node.stats(x.id(), dir.resolve("missing")));

        VolumeMeta b = rig.block("pvc-stats-blk", 16 * MIB);
        Path bTarget = dir.resolve("pods/pod-stats-blk/dev");
        node.stage(b.id(), staging("blk"), VolumeMode.BLOCK, "", NO_FLAGS, false);
        node.publish(b.id(), staging("blk"), bTarget, VolumeMode.BLOCK, "", NO_FLAGS, false);
        VolumeStats bs = node.stats(b.id(), bTarget);
        assertEquals(16 * MIB, bs.totalBytes());
        assertEquals(-1, bs.totalInodes());
        assertFalse(bs.condition().abnormal(), bs.toString());

        node.unpublish(b.id(), bTarget);
        node.unstage(b.id(), staging("blk"));
        expect(Kind.NOT_FOUND, () -> node.stats(b.id(), bTarget)); // not staged: it is nowhere on this node

        node.unpublish(x.id(), xTarget);
        node.unstage(x.id(), staging("pvc-stats"));
        expect(Kind.NOT_FOUND, () -> node.stats(x.id(), elsewhere));
        Files.delete(rig.pool.volumeImage(x.id()));
        VolumeStats gone = node.stats(x.id(), elsewhere);
        assertTrue(gone.condition().abnormal() && gone.condition().message().contains("backing file"), gone.toString());
    }
}
