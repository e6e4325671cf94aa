package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.GIB;
import static io.loopcsi.engine.Rig.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;


class PoolDirectoryTest extends KernelTestDirs {

    private Rig rig;
    private PoolDirectory pool;

    @BeforeEach
    void setUp() throws Exception {
        rig = new Rig(dir.resolve("pool"), 16 * GIB);
        pool = rig.pool;
    }

    private static VolumeMeta meta(String name, long bytes) {
        return new VolumeMeta(Ids.volumeIdFor(name), name, bytes, VolumeMode.FILESYSTEM, "xfs", null, null,
                Map.of("tier", "fast", "x", "y"), 1_700_000_000_000L);
    }

    private List<String> files(String sub) throws Exception {
        try (Stream<Path> s = Files.list(pool.root().resolve(sub))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void metadataIsWrittenCompletelyAndReadBack() throws Exception {
        VolumeMeta m = meta("pvc-a", 300 * MIB);
        pool.writeVolume(m);
        assertEquals(Optional.of(m), pool.readVolume(m.id()));
        assertEquals(List.of(m.id() + ".json"), files("volumes"), "no temp file is left behind");
        // the file is plain JSON a person (or a restarted process) can read
        var tree = new ObjectMapper().readTree(pool.root().resolve("volumes").resolve(m.id() + ".json").toFile());
        assertEquals(300 * MIB, tree.get("capacityBytes").asLong());
        assertEquals("fast", tree.get("parameters").get("tier").asText());

        VolumeMeta grown = m.withCapacity(600 * MIB);
        pool.writeVolume(grown);
        assertEquals(600 * MIB, pool.readVolume(m.id()).orElseThrow().capacityBytes());
        assertEquals(List.of(m.id() + ".json"), files("volumes"));
    }

    /** The sector size is kept; metadata an earlier version wrote (no such field) reads as 0, "not recorded". */
    @Test
    void theSectorSizeIsKeptAndAbsentInAnEarlierVersionsMetadata() throws Exception {
        VolumeMeta m = meta("pvc-4k", 300 * MIB).withLogicalBlockSize(4096);
        pool.writeVolume(m);
        Path file = pool.root().resolve("volumes").resolve(m.id() + ".json");
        assertEquals(4096, new ObjectMapper().readTree(file.toFile()).get("logicalBlockSize").asInt());
        assertEquals(4096, new PoolDirectory(pool.lock()).readVolume(m.id()).orElseThrow().logicalBlockSize(), "read back from the file");

        var old = (com.fasterxml.jackson.databind.node.ObjectNode) new ObjectMapper().readTree(file.toFile());
        old.remove("logicalBlockSize");
        Files.writeString(file, old.toString());
        VolumeMeta read = new PoolDirectory(pool.lock()).readVolume(m.id()).orElseThrow();
        assertEquals(0, read.logicalBlockSize());
        assertEquals(m.withLogicalBlockSize(0), read, "everything else as written");
    }

    @Test
    void aStaleTempFileFromACrashNeitherShowsNorBlocksTheNextWrite() throws Exception {
        VolumeMeta m = meta("pvc-crash", 300 * MIB);
        Path tmp = pool.root().resolve("volumes").resolve(m.id() + ".json.tmp");
        Files.writeString(tmp, "{\"id\":\"" + m.id() + "\", \"capac"); // torn write
        assertEquals(Optional.empty(), pool.readVolume(m.id()));
        assertEquals(List.of(), pool.listVolumes());
        pool.writeVolume(m);
        assertEquals(Optional.of(m), pool.readVolume(m.id()));
        assertFalse(Files.exists(tmp));
    }

    @Test
    void snapshotMetadataRoundTrips() {
        SnapshotMeta s = new SnapshotMeta(Ids.snapshotIdFor("s1"), "s1", Ids.volumeIdFor("v"), 8 * MIB, VolumeMode.BLOCK, "", 42L);
        pool.writeSnapshot(s);
        assertEquals(Optional.of(s), pool.readSnapshot(s.id()));
        assertEquals(List.of(s), pool.listSnapshots());
        assertEquals(List.of(), pool.listVolumes(), "snapshots are not volumes");
    }

    @Test
    void theInMemoryIndexStaysInStepWithTheFiles() throws Exception {
        VolumeMeta a = meta("idx-a", MIB);
        pool.writeVolume(a);
        assertEquals(List.of(a), pool.listVolumes()); // loads the index
        VolumeMeta b = meta("idx-b", 2 * MIB);
        pool.writeVolume(b);
        VolumeMeta grown = a.withCapacity(4 * MIB);
        pool.writeVolume(grown);
        pool.deleteVolume(b.id());
        assertEquals(List.of(grown), pool.listVolumes());
        assertEquals(Optional.of(grown), pool.readVolume(a.id()));
        assertEquals(Optional.empty(), pool.readVolume(b.id()));
        assertEquals(4 * MIB, pool.volumeBytes());
        // the files say the same: a fresh process (a new PoolDirectory) finds exactly what the index holds
        PoolDirectory again = new PoolDirectory(pool.root());
        assertEquals(pool.listVolumes(), again.listVolumes());
        assertEquals(List.of(a.id() + ".json"), files("volumes"));
    }

    @Test
    void listingIsSortedByIdAndIgnoresForeignFiles() throws Exception {
        for (String n : List.of("zeta", "alpha", "mid", "b", "q")) {
            pool.writeVolume(meta(n, MIB));
        }
        Files.writeString(pool.root().resolve("volumes").resolve("notes.json"), "{}");
        Files.writeString(pool.root().resolve("volumes").resolve("VOL-X.json"), "{}");
        List<String> ids = pool.listVolumes().stream().map(VolumeMeta::id).toList();
        assertEquals(5, ids.size());
        assertEquals(ids.stream().sorted().toList(), ids);
    }

    @Test
    void deleteRemovesMetadataAndImageAndIsRepeatable() throws Exception {
        VolumeMeta v = rig.block("pvc-del", 4 * MIB);
        assertTrue(Files.exists(pool.volumeImage(v.id())));
        pool.deleteVolume(v.id());
        assertEquals(Optional.empty(), pool.readVolume(v.id()));
        assertEquals(List.of(), files("volumes"));
        pool.deleteVolume(v.id());
        assertEquals(List.of(), files("volumes"));
    }

    @Test
    void recoverRemovesLeftoversAndKeepsCommittedVolumes() throws Exception {
        VolumeMeta kept = rig.block("kept", 4 * MIB);
        VolumeMeta keptFs = rig.fs("kept-fs", "xfs", 300 * MIB);
        SnapshotMeta snap = rig.engine.createSnapshot("kept-snap", kept.id());
        Path vols = pool.root().resolve("volumes");
        Path snaps = pool.root().resolve("snapshots");
        // an interrupted create: image renamed into place but never committed
        String orphan = Ids.volumeIdFor("orphan");
        PoolDirectory.createSparse(vols.resolve(orphan + ".img"), 4 * MIB);
        // an interrupted copy and an interrupted metadata write
        PoolDirectory.createSparse(vols.resolve(Ids.volumeIdFor("half") + ".img.tmp"), 4 * MIB);
        Files.writeString(vols.resolve(Ids.volumeIdFor("torn") + ".json.tmp"), "{");
        PoolDirectory.createSparse(snaps.resolve(Ids.snapshotIdFor("half-snap") + ".img.tmp"), 4 * MIB);
        PoolDirectory.createSparse(snaps.resolve(Ids.snapshotIdFor("orphan-snap") + ".img"), 4 * MIB);

        List<String> done = rig.engine.recover();

        assertEquals(5, done.size(), String.join("\n", done));
        assertEquals(List.of(kept.id() + ".img", kept.id() + ".json", keptFs.id() + ".img", keptFs.id() + ".json").stream().sorted()
                .toList(), files("volumes"));
        assertEquals(List.of(snap.id() + ".img", snap.id() + ".json"), files("snapshots"));
        assertEquals(List.of(kept, keptFs).stream().sorted((a, b) -> a.id().compareTo(b.id())).toList(), rig.engine.volumes());
        assertEquals(List.of(), rig.engine.recover(), "a second scan finds nothing to do");
    }

    @Test
    void recoverKeepsAnUncommittedImageThatIsAttachedToALoopDevice() throws Exception {
        Path image = pool.root().resolve("volumes").resolve(Ids.volumeIdFor("in-use") + ".img");
        PoolDirectory.createSparse(image, 4 * MIB);
        String dev = rig.loops.findOrAttach(image, false);
        try {
            assertEquals(List.of(), rig.engine.recover());
            assertTrue(Files.exists(image), "an attached image is never removed under its device");
        } finally {
            rig.loops.detach(dev);
        }
        assertEquals(1, rig.engine.recover().size());
        assertFalse(Files.exists(image));
    }

    /**
     * A restore from another node cut short as its node stopped (issue 35: "a transfer cut by either
     * side's restart goes on from where it stopped"): the fill ends ABORTED, the temporary image and
     * the fetch's progress stay, nothing is counted, and the start-up scan keeps them for the fetch
     * to go on with; a temporary image without progress is still a leftover. Deleting the volume
     * (given up) removes both.
     */
    @Test
    void aFetchCutShortByItsNodesStopIsKeptToGoOnWithUntilTheVolumeIsDeleted() throws Exception {
        long allocated = rig.engine.capacity().allocatedBytes();
        CreateRequest req = new CreateRequest("moved", 4 * MIB, 0, VolumeMode.BLOCK, "", Ids.snapshotIdFor("elsewhere"), null, Map.of());
        String id = Ids.volumeIdFor("moved");
        Path progress = PoolDirectory.transferProgress(pool.root(), id);
        Rig.expect(EngineException.Kind.ABORTED, () -> rig.engine.createVolumeFrom(req, new VolumeEngine.RemoteSource("x", null, null, 4 * MIB, 0),
                (image, bytes) -> {
                    try {
                        PoolDirectory.createSparse(image, bytes);
                        Files.createDirectories(progress.getParent());
                        Files.writeString(progress, "{}");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    throw new EngineException(EngineException.Kind.ABORTED, "the node stops");
                }));
        assertEquals(List.of(id + ".img.tmp"), files("volumes"), "the image being fetched stays");
        assertEquals(allocated, rig.engine.capacity().allocatedBytes(), "nothing counted while the fetch does not run");
        PoolDirectory.createSparse(pool.root().resolve("volumes").resolve(Ids.volumeIdFor("other") + ".img.tmp"), MIB);

        List<String> done = rig.engine.recover();

        assertEquals(1, done.size(), String.join("\n", done));
        assertEquals(List.of(id + ".img.tmp"), files("volumes"), "the fetch's image is kept for it to go on; the leftover without progress goes");
        rig.engine.deleteVolume(id);
        assertEquals(List.of(), files("volumes"));
        assertFalse(Files.exists(progress), "the progress of a fetch given up goes with its volume");
    }

    /** A fetch cut short as its node stopped: the partial image and the progress (the same as above). */
    private String cutFetch(String name, long bytes) throws Exception {
        CreateRequest req = new CreateRequest(name, bytes, 0, VolumeMode.BLOCK, "", Ids.snapshotIdFor("elsewhere"), null, Map.of());
        String id = Ids.volumeIdFor(name);
        Path progress = PoolDirectory.transferProgress(pool.root(), id);
        Rig.expect(EngineException.Kind.ABORTED, () -> rig.engine.createVolumeFrom(req, new VolumeEngine.RemoteSource("x", null, null, bytes, 0),
                (image, size) -> {
                    try {
                        PoolDirectory.createSparse(image, size);
                        Files.createDirectories(progress.getParent());
                        Files.writeString(progress, "{\"done\":\"AQ==\"}");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    throw new EngineException(EngineException.Kind.ABORTED, "the node stops");
                }));
        return id;
    }

    /**
     * The disk audit's view of destination fetches (issue 35, an abandoned transfer): each progress
     * file of a volume ID, with its partial image's size when the image is there; a source's copy, a
     * progress being written and a temporary image without progress are no fetch.
     */
    @Test
    void partialFetchesAreListedByTheirProgressWithTheImagesSize() throws Exception {
        assertEquals(List.of(), PoolDirectory.partialFetches(pool.root()), "no transfers directory yet");
        String cut = cutFetch("moved", 4 * MIB);
        String progressOnly = Ids.volumeIdFor("progress-only");
        Path transfers = pool.root().resolve("transfers");
        Files.writeString(transfers.resolve(progressOnly + ".json"), "{}");
        Files.writeString(transfers.resolve(Ids.volumeIdFor("copy") + ".source.img"), "x");
        Files.writeString(transfers.resolve(Ids.volumeIdFor("saving") + ".json.tmp"), "{}");
        Files.writeString(transfers.resolve("not-a-volume.json"), "{}");
        PoolDirectory.createSparse(pool.root().resolve("volumes").resolve(Ids.volumeIdFor("no-progress") + ".img.tmp"), MIB);

        List<PoolDirectory.PartialFetch> found = PoolDirectory.partialFetches(pool.root());

        List<PoolDirectory.PartialFetch> expected = new java.util.ArrayList<>(List.of(
                new PoolDirectory.PartialFetch(cut, 4 * MIB, "{\"done\":\"AQ==\"}".length()),
                new PoolDirectory.PartialFetch(progressOnly, -1, 2)));
        expected.sort(java.util.Comparator.comparing(PoolDirectory.PartialFetch::volumeId));
        assertEquals(expected, found);
        assertEquals(cut + " (an abandoned transfer's partial image volumes/" + cut + ".img.tmp, 4Mi, and its progress transfers/" + cut
                + ".json, 15 bytes)", new PoolDirectory.PartialFetch(cut, 4 * MIB, 15).describe());
        assertEquals(progressOnly + " (an abandoned transfer's progress transfers/" + progressOnly + ".json, 2 bytes)",
                new PoolDirectory.PartialFetch(progressOnly, -1, 2).describe());
    }

    /**
     * What the node deletes of an abandoned transfer (node/AbandonedFetches decides when): the
     * partial image and the progress, never while the volume is locked (its fetch runs), never of a
     * committed volume, and nothing else of the pool.
     */
    @Test
    void anAbandonedFetchIsDroppedOnlyWhenNothingHoldsIt() throws Exception {
        String cut = cutFetch("moved", 4 * MIB);
        VolumeMeta kept = rig.block("kept", 4 * MIB);
        Path keptProgress = PoolDirectory.transferProgress(pool.root(), kept.id());
        Files.writeString(keptProgress, "{}"); // a progress beside a committed volume (deleted with it)
        Path progress = PoolDirectory.transferProgress(pool.root(), cut);

        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread fetching = new Thread(() -> { // a fetch of it running (the lock is reentrant: another thread holds it)
            try (VolumeLocks.Held h = rig.locks.tryAcquire(cut)) {
                held.countDown();
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        fetching.start();
        held.await();
        assertFalse(rig.engine.dropAbandonedFetch(cut));
        done.countDown();
        fetching.join();
        assertTrue(Files.exists(progress));
        assertFalse(rig.engine.dropAbandonedFetch(kept.id()), "a committed volume's files are its own");
        assertTrue(Files.exists(keptProgress));

        assertTrue(rig.engine.dropAbandonedFetch(cut));

        assertEquals(List.of(kept.id() + ".img", kept.id() + ".json"), files("volumes"));
        assertEquals(List.of(kept.id() + ".json"), files("transfers"));
        assertFalse(rig.engine.dropAbandonedFetch(cut), "repeatable: nothing left to drop");
        assertEquals(List.of(kept.id()), PoolDirectory.partialFetches(pool.root()).stream().map(PoolDirectory.PartialFetch::volumeId).toList());
    }
}
