package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.GIB;
import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.allocatedBytes;
import static io.loopcsi.engine.Rig.expect;
import static io.loopcsi.testing.Data.randomBytes;
import static io.loopcsi.testing.Data.readAt;
import static io.loopcsi.testing.Data.writeAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

class VolumeEngineTest extends KernelTestDirs {

    private Rig rig;
    private VolumeEngine engine;

    @BeforeEach
    void setUp() throws Exception {
        rig = new Rig(dir.resolve("pool"), 4 * GIB);
        engine = rig.engine;
    }

    private static CreateRequest req(String name, long required, long limit, VolumeMode mode, String fs) {
        return new CreateRequest(name, required, limit, mode, fs, null, null, Map.of());
    }

    private static CreateRequest restore(String name, long required, long limit, VolumeMode mode, String fs, String snapshotId) {
        return new CreateRequest(name, required, limit, mode, fs, snapshotId, null, Map.of());
    }

    private static CreateRequest clone(String name, long required, long limit, VolumeMode mode, String fs, String volumeId) {
        return new CreateRequest(name, required, limit, mode, fs, null, volumeId, Map.of());
    }

    private List<String> files(String sub) throws Exception {
        try (Stream<Path> s = Files.list(rig.pool.root().resolve(sub))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    // ---- create ----------------------------------------------------------------------------

    @Test
    void createsSparseBlockAndXfsVolumes() throws Exception {
        VolumeMeta b = rig.block("pvc-block", 2 * GIB);
        VolumeMeta x = engine.createVolume(req("pvc-xfs", 100 * MIB, 0, VolumeMode.FILESYSTEM, "xfs"));

        assertEquals(Ids.volumeIdFor("pvc-block"), b.id());
        assertEquals(2 * GIB, b.capacityBytes());
        assertEquals(VolumeMode.BLOCK, b.mode());
        assertEquals("", b.fsType());
        assertEquals(300 * MIB, x.capacityBytes(), "xfs is rounded up to its minimum");
        assertEquals("xfs", x.fsType());
        assertEquals(VolumeMode.FILESYSTEM, x.mode());

        assertEquals(2 * GIB, Files.size(rig.image(b)));
        assertEquals(300 * MIB, Files.size(rig.image(x)));
        assertTrue(allocatedBytes(rig.image(b)) < MIB, "image must be sparse: " + allocatedBytes(rig.image(b)));
        assertTrue(allocatedBytes(rig.image(x)) < MIB, "image must be sparse: " + allocatedBytes(rig.image(x)));

        assertEquals(Optional.of(b), engine.volume(b.id()));
        List<VolumeMeta> expected = new ArrayList<>(List.of(b, x));
        expected.sort((p, q) -> p.id().compareTo(q.id()));
        assertEquals(expected, engine.volumes());
        assertEquals(Condition.HEALTHY, engine.condition(b.id()));
        assertEquals(Optional.empty(), engine.volume("vol-nonsense"));
    }

    @Test
    void volumesSurviveARestartOfTheEngine() {
        VolumeMeta v = rig.block("pvc-restart", 8 * MIB);
        Rig again = new Rig(dir.resolve("pool"), 4 * GIB);
        assertEquals(Optional.of(v), again.engine.volume(v.id()));
        assertEquals(v, again.block("pvc-restart", 8 * MIB), "a retried create after a restart returns the same volume");
    }

    @Test
    void sameNameAndSameRequestReturnsTheSameVolume() throws Exception {
        CreateRequest r = new CreateRequest("pvc-same", 500 * MIB, GIB, VolumeMode.FILESYSTEM, "xfs", null, null,
                Map.of("tier", "fast"));
        VolumeMeta first = engine.createVolume(r);
        VolumeMeta second = engine.createVolume(r);
        assertEquals(first, second);
        assertEquals(List.of(first.id() + ".img", first.id() + ".json"), files("volumes"));
        // a request the existing volume also satisfies is the same volume too
        assertEquals(first, engine.createVolume(new CreateRequest("pvc-same", 0, 0, VolumeMode.FILESYSTEM, "xfs", null, null,
                Map.of("tier", "fast"))));
    }

    @Test
    void retryingACreateSucceedsEvenWhenThePoolIsFull() {
        Rig small = new Rig(dir.resolve("small"), GIB);
        VolumeMeta v = small.block("pvc-full", GIB);
        assertEquals(0, small.engine.capacity().availableBytes());
        assertEquals(v, small.block("pvc-full", GIB));
    }

    @Test
    void concurrentCreatesOfOneNameMakeOneVolume() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<VolumeMeta>> fs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                fs.add(pool.submit(() -> rig.block("pvc-race", 64 * MIB)));
            }
            VolumeMeta first = fs.get(0).get();
            for (Future<VolumeMeta> f : fs) {
                assertEquals(first, f.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, engine.volumes().size());
        assertEquals(64 * MIB, engine.capacity().allocatedBytes());
    }

    @Test
    void sameNameWithOtherPropertiesIsAlreadyExists() throws Exception {
        VolumeMeta v = engine.createVolume(req("pvc-x", GIB, 0, VolumeMode.FILESYSTEM, "xfs"));
        expect(Kind.ALREADY_EXISTS, () -> engine.createVolume(req("pvc-x", 2 * GIB, 0, VolumeMode.FILESYSTEM, "xfs")));
        expect(Kind.ALREADY_EXISTS, () -> engine.createVolume(req("pvc-x", 512 * MIB, 512 * MIB, VolumeMode.FILESYSTEM, "xfs")));
        expect(Kind.ALREADY_EXISTS, () -> engine.createVolume(req("pvc-x", GIB, 0, VolumeMode.BLOCK, "")));
        expect(Kind.ALREADY_EXISTS, () -> engine.createVolume(req("pvc-x", GIB, 0, VolumeMode.FILESYSTEM, "ext4")));
        EngineException e = expect(Kind.ALREADY_EXISTS, () -> engine.createVolume(new CreateRequest("pvc-x", GIB, 0,
                VolumeMode.FILESYSTEM, "xfs", null, null, Map.of("tier", "slow"))));
        assertTrue(e.getMessage().contains("parameters"), e.getMessage());
        assertEquals(Optional.of(v), engine.volume(v.id()), "the existing volume is untouched");
        assertEquals(GIB, Files.size(rig.image(v)));
    }

    // ---- capacity --------------------------------------------------------------------------

    @Test
    void capacityCountsVolumesAndSnapshotsAndRefusesWhatDoesNotFit() throws Exception {
        Rig r = new Rig(dir.resolve("small"), 2 * GIB);
        VolumeEngine e = r.engine;
        PoolCapacity empty = e.capacity();
        assertEquals(2 * GIB, empty.totalBytes());
        assertEquals(0, empty.allocatedBytes());
        assertEquals(2 * GIB, empty.availableBytes());

        VolumeMeta a = r.block("a", 512 * MIB);
        VolumeMeta b = r.block("b", 256 * MIB);
        e.createSnapshot("snap-b", b.id());
        PoolCapacity c = e.capacity();
        assertEquals(GIB, c.allocatedBytes(), "512Mi + 256Mi + a 256Mi snapshot");
        assertEquals(Math.min(GIB, c.hostFreeBytes() - c.hostPromisedBytes()), c.availableBytes());

        List<String> before = filesOf(r);
        EngineException ex = expect(Kind.RESOURCE_EXHAUSTED, () -> r.block("too-big", GIB + MIB));
        assertTrue(ex.getMessage().contains("available"), ex.getMessage());
        assertEquals(before, filesOf(r), "a refused create leaves nothing behind");
        assertEquals(Optional.empty(), e.volume(Ids.volumeIdFor("too-big")));

        r.block("fits", GIB);
        assertEquals(0, e.capacity().availableBytes());
        expect(Kind.RESOURCE_EXHAUSTED, () -> e.expandVolume(a.id(), 513 * MIB, 0));
        assertEquals(512 * MIB, Files.size(r.image(a)), "a refused expansion does not grow the image");
        assertEquals(512 * MIB, e.volume(a.id()).orElseThrow().capacityBytes());
        expect(Kind.RESOURCE_EXHAUSTED, () -> e.createSnapshot("snap-a", a.id()));
        assertEquals(1, e.snapshots().size());
        assertEquals(List.of(), Files.list(r.pool.root().resolve("snapshots")).filter(p -> p.toString().endsWith(".tmp")).toList());

        e.deleteVolume(a.id());
        assertEquals(512 * MIB, e.capacity().availableBytes(), "deleting gives the space back");
    }

    private static List<String> filesOf(Rig r) throws Exception {
        List<String> out = new ArrayList<>();
        for (String sub : List.of("volumes", "snapshots")) {
            try (Stream<Path> s = Files.list(r.pool.root().resolve(sub))) {
                s.map(p -> sub + "/" + p.getFileName()).forEach(out::add);
            }
        }
        return out.stream().sorted().toList();
    }

    @Test
    void theHostsFreeSpaceBoundsAPoolLargerThanTheDisk() throws Exception {
        Rig r = new Rig(dir.resolve("huge"), 1L << 50);
        PoolCapacity c = r.engine.capacity();
        assertEquals(c.hostFreeBytes(), c.availableBytes());
        long usable = Files.getFileStore(r.pool.root()).getUsableSpace();
        assertTrue(Math.abs(usable - c.hostFreeBytes()) < GIB, usable + " vs " + c.hostFreeBytes());
        EngineException e = expect(Kind.RESOURCE_EXHAUSTED, () -> r.block("beyond-disk", Sizes.roundUpToMiB(c.hostFreeBytes() + 4 * GIB)));
        assertTrue(e.getMessage().contains("host filesystem"), e.getMessage());
        assertEquals(List.of(), r.engine.volumes());
    }

    // ---- expand ----------------------------------------------------------------------------

    @Test
    void expandGrowsImageAndMetadataKeepsDataAndNeverShrinks() throws Exception {
        VolumeMeta v = rig.block("pvc-grow", 8 * MIB);
        byte[] data = randomBytes(4096, 1);
        writeAt(rig.image(v), 3 * MIB, data);

        VolumeMeta grown = engine.expandVolume(v.id(), 20 * MIB + 1, 0);
        assertEquals(21 * MIB, grown.capacityBytes());
        assertEquals(21 * MIB, Files.size(rig.image(v)));
        assertEquals(Optional.of(grown), engine.volume(v.id()));
        assertArrayEquals(data, readAt(rig.image(v), 3 * MIB, data.length));
        assertTrue(allocatedBytes(rig.image(v)) < MIB, "growing keeps the image sparse");

        assertEquals(grown, engine.expandVolume(v.id(), 10 * MIB, 0), "asking for less returns it as it is");
        assertEquals(grown, engine.expandVolume(v.id(), 21 * MIB, 0));
        assertEquals(21 * MIB, Files.size(rig.image(v)));
        expect(Kind.OUT_OF_RANGE, () -> engine.expandVolume(v.id(), 10 * MIB, 12 * MIB));
        assertEquals(21 * MIB, Files.size(rig.image(v)));
        expect(Kind.NOT_FOUND, () -> engine.expandVolume(Ids.volumeIdFor("nope"), GIB, 0));
        expect(Kind.INVALID_ARGUMENT, () -> engine.expandVolume(v.id(), 2 * GIB, GIB));
    }

    // ---- snapshots, restores, clones -------------------------------------------------------

    @Test
    void snapshotIsAByteIdenticalCopyMadeAtThatPoint() throws Exception {
        VolumeMeta v = rig.block("pvc-snap", 8 * MIB);
        Path image = rig.image(v);
        writeAt(image, 0, randomBytes(4096, 2));
        writeAt(image, 7 * MIB + 123, randomBytes(10_000, 3));
        Path reference = dir.resolve("reference.img");
        Files.copy(image, reference);

        SnapshotMeta s = engine.createSnapshot("snap-1", v.id());
        assertEquals(Ids.snapshotIdFor("snap-1"), s.id());
        assertEquals(v.id(), s.sourceVolumeId());
        assertEquals(8 * MIB, s.sizeBytes());
        assertEquals(VolumeMode.BLOCK, s.sourceMode());
        Path snapImage = rig.pool.snapshotImage(s.id());
        assertEquals(-1, Files.mismatch(reference, snapImage));
        assertTrue(allocatedBytes(snapImage) < MIB, "the copy stays sparse: " + allocatedBytes(snapImage));

        writeAt(image, 0, randomBytes(4096, 4)); // the volume changes after the snapshot
        assertEquals(-1, Files.mismatch(reference, snapImage), "the snapshot keeps the point-in-time content");

        assertEquals(s, engine.createSnapshot("snap-1", v.id()), "same name, same source: the same snapshot");
        VolumeMeta other = rig.block("pvc-other", 8 * MIB);
        expect(Kind.ALREADY_EXISTS, () -> engine.createSnapshot("snap-1", other.id()));
        expect(Kind.NOT_FOUND, () -> engine.createSnapshot("snap-2", Ids.volumeIdFor("missing")));
        assertEquals(List.of(s), engine.snapshots());
        assertEquals(Optional.of(s), engine.snapshot(s.id()));

        engine.deleteSnapshot(s.id());
        assertEquals(List.of(), engine.snapshots());
        assertEquals(List.of(), files("snapshots"));
        engine.deleteSnapshot(s.id()); // again: still fine
        assertEquals(Optional.of(v), engine.volume(v.id()), "deleting a snapshot leaves its source alone");
    }

    @Test
    void restoreAndCloneHaveTheSourcesContentAndMayBeLarger() throws Exception {
        VolumeMeta v = rig.block("pvc-src", 8 * MIB);
        byte[] head = randomBytes(8192, 5);
        byte[] tail = randomBytes(4096, 6);
        writeAt(rig.image(v), 0, head);
        writeAt(rig.image(v), 8 * MIB - tail.length, tail);
        SnapshotMeta s = engine.createSnapshot("snap-src", v.id());
        Path snapImage = rig.pool.snapshotImage(s.id());

        VolumeMeta same = engine.createVolume(restore("pvc-restored", 0, 0, VolumeMode.BLOCK, "", s.id()));
        assertEquals(GIB, same.capacityBytes(), "no range: the default size, larger than the snapshot");
        VolumeMeta exact = engine.createVolume(restore("pvc-exact", MIB, 0, VolumeMode.BLOCK, "", s.id()));
        assertEquals(8 * MIB, exact.capacityBytes(), "never smaller than the snapshot");
        assertEquals(-1, Files.mismatch(snapImage, rig.image(exact)));
        assertEquals(s.id(), exact.sourceSnapshotId());

        VolumeMeta bigger = engine.createVolume(restore("pvc-bigger", 16 * MIB, 0, VolumeMode.BLOCK, "", s.id()));
        assertEquals(16 * MIB, Files.size(rig.image(bigger)));
        assertArrayEquals(readAt(snapImage, 0, (int) (8 * MIB)), readAt(rig.image(bigger), 0, (int) (8 * MIB)));
        assertArrayEquals(new byte[(int) (8 * MIB)], readAt(rig.image(bigger), 8 * MIB, (int) (8 * MIB)), "the rest is zeros");

        writeAt(rig.image(v), 4 * MIB, randomBytes(512, 7)); // the clone sees the source as it is now
        VolumeMeta clone = engine.createVolume(clone("pvc-clone", 12 * MIB, 0, VolumeMode.BLOCK, "", v.id()));
        assertEquals(12 * MIB, clone.capacityBytes());
        assertEquals(v.id(), clone.sourceVolumeId());
        assertArrayEquals(readAt(rig.image(v), 0, (int) (8 * MIB)), readAt(rig.image(clone), 0, (int) (8 * MIB)));
        assertTrue(allocatedBytes(rig.image(clone)) < MIB, "the clone stays sparse");
        assertEquals(clone, engine.createVolume(clone("pvc-clone", 12 * MIB, 0, VolumeMode.BLOCK, "", v.id())));
        expect(Kind.ALREADY_EXISTS, () -> engine.createVolume(clone("pvc-clone", 12 * MIB, 0, VolumeMode.BLOCK, "", exact.id())));

        expect(Kind.OUT_OF_RANGE, () -> engine.createVolume(restore("pvc-small", MIB, 4 * MIB, VolumeMode.BLOCK, "", s.id())));
        expect(Kind.OUT_OF_RANGE, () -> engine.createVolume(clone("pvc-small2", 0, 4 * MIB, VolumeMode.BLOCK, "", v.id())));
        expect(Kind.NOT_FOUND, () -> engine.createVolume(restore("pvc-ghost", 0, 0, VolumeMode.BLOCK, "", Ids.snapshotIdFor("ghost"))));
        expect(Kind.NOT_FOUND, () -> engine.createVolume(clone("pvc-ghost2", 0, 0, VolumeMode.BLOCK, "", Ids.volumeIdFor("ghost"))));
        assertNull(same.sourceVolumeId());
    }

    @Test
    void restoreOrCloneIntoAnotherModeOrFilesystemIsInvalid() throws Exception {
        VolumeMeta blk = rig.block("pvc-blk", 8 * MIB);
        VolumeMeta xfs = rig.fs("pvc-xfs", "xfs", 300 * MIB);
        SnapshotMeta blkSnap = engine.createSnapshot("snap-blk", blk.id());
        SnapshotMeta xfsSnap = engine.createSnapshot("snap-xfs", xfs.id());
        assertEquals("xfs", xfsSnap.sourceFsType());
        List<String> before = files("volumes");

        expect(Kind.INVALID_ARGUMENT, () -> engine.createVolume(restore("r1", 0, 0, VolumeMode.FILESYSTEM, "xfs", blkSnap.id())));
        expect(Kind.INVALID_ARGUMENT, () -> engine.createVolume(restore("r2", 0, 0, VolumeMode.BLOCK, "", xfsSnap.id())));
        expect(Kind.INVALID_ARGUMENT, () -> engine.createVolume(restore("r3", 0, 0, VolumeMode.FILESYSTEM, "ext4", xfsSnap.id())));
        expect(Kind.INVALID_ARGUMENT, () -> engine.createVolume(clone("c1", 0, 0, VolumeMode.FILESYSTEM, "ext4", xfs.id())));
        expect(Kind.INVALID_ARGUMENT, () -> engine.createVolume(clone("c2", 0, 0, VolumeMode.BLOCK, "", xfs.id())));
        expect(Kind.INVALID_ARGUMENT, () -> engine.createVolume(clone("c3", 0, 0, VolumeMode.FILESYSTEM, "xfs", blk.id())));
        assertEquals(before, files("volumes"), "nothing was created");

        VolumeMeta ok = engine.createVolume(restore("r4", 0, 0, VolumeMode.FILESYSTEM, "xfs", xfsSnap.id()));
        assertEquals("xfs", ok.fsType());
    }

    // ---- delete ----------------------------------------------------------------------------

    @Test
    void deleteRemovesTheVolumeAndUnknownIdsSucceed() throws Exception {
        VolumeMeta v = rig.block("pvc-del", 8 * MIB);
        engine.deleteVolume(v.id());
        assertEquals(Optional.empty(), engine.volume(v.id()));
        assertEquals(List.of(), files("volumes"));
        engine.deleteVolume(v.id());
        engine.deleteVolume(Ids.volumeIdFor("never-existed"));
        assertEquals(List.of(), engine.volumes());
        // the name is free again
        assertEquals(16 * MIB, rig.block("pvc-del", 16 * MIB).capacityBytes());
    }

    @Test
    void deletingAVolumeStillAttachedToALoopDeviceIsRefused() throws Exception {
        VolumeMeta v = rig.block("pvc-busy", 8 * MIB);
        String dev = rig.loops.findOrAttach(rig.image(v), false);
        try {
            EngineException e = expect(Kind.FAILED_PRECONDITION, () -> engine.deleteVolume(v.id()));
            assertTrue(e.getMessage().contains(dev), e.getMessage());
            assertTrue(Files.exists(rig.image(v)));
            assertEquals(Optional.of(v), engine.volume(v.id()));
        } finally {
            rig.loops.detach(dev);
        }
        engine.deleteVolume(v.id());
        assertFalse(Files.exists(rig.image(v)));
    }

    @Test
    void conditionReportsAMissingOrShrunkenBackingFile() throws Exception {
        VolumeMeta v = rig.block("pvc-cond", 8 * MIB);
        assertFalse(engine.condition(v.id()).abnormal());
        try (var ch = java.nio.channels.FileChannel.open(rig.image(v), java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(4 * MIB);
        }
        assertTrue(engine.condition(v.id()).abnormal());
        Files.delete(rig.image(v));
        Condition gone = engine.condition(v.id());
        assertTrue(gone.abnormal());
        assertTrue(gone.message().contains("missing"), gone.message());
        expect(Kind.NOT_FOUND, () -> engine.condition(Ids.volumeIdFor("nope")));
    }
}
