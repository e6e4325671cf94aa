package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.loopcsi.engine.CommandRunner;
import io.loopcsi.testing.KernelCleanup;

/**
 * The transfer's core on real sparse files: in a temp dir on the machine's filesystem and on a
 * real xfs loop-mounted below it (the pool directories' usual filesystem), both released even
 * when a test fails. What a user would notice: the content arrives whole, only the allocated
 * bytes travel, a cut transfer goes on where it stopped, and bad input is refused with nothing written.
 */
class TransferCoreTest {

    /** The format a destination of this release asks for first; the digest's properties are pinned in both below. */
    static final DigestFormat F = DigestFormat.CRC_V2;

    static final int KIB = 1024;
    static final int MIB = 1024 * 1024;
    static final int CHUNK = 256 * KIB;

    static Path classDir;
    static Path xfs;
    static final CommandRunner RUN = new CommandRunner(Duration.ofSeconds(60));
    static final AllocatedRanges RANGES = new AllocatedRanges(RUN);

    Path dir;

    @BeforeAll
    static void mountXfs() throws Exception {
        classDir = Files.createTempDirectory(Path.of("/tmp"), "loopcsi-transfer-");
        Path img = classDir.resolve("xfs.img");
        xfs = Files.createDirectory(classDir.resolve("xfs"));
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(400L * MIB); // xfs needs >= 300 MiB
        }
        RUN.run("mkfs.xfs", "-q", img.toString());
        RUN.run("mount", "-o", "loop", img.toString(), xfs.toString());
    }

    @AfterAll
    static void release() {
        KernelCleanup.releaseAndDelete(classDir);
    }

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory(xfs, "t");
    }

    @AfterEach
    void removeDir() {
        KernelCleanup.deleteTree(dir);
    }

    // ---- ranges -------------------------------------------------------------------------------

    @Test
    void theRangesAreWhatWasWrittenOnXfsAndOnTheHostFilesystem() throws Exception {
        for (Path base : List.of(dir, Files.createTempDirectory(classDir, "host"))) {
            Path f = sparse(base.resolve("a.img"), 64L * MIB);
            write(f, 192 * KIB, random(64 * KIB, 1));
            write(f, 8000L * KIB, random(4 * KIB, 2));
            write(f, 64L * MIB - 4 * KIB, random(4 * KIB, 3)); // the last block: a range ending at the size
            RangeList r = RANGES.of(f);
            assertEquals(List.of(new Range(192 * KIB, 64 * KIB), new Range(8000L * KIB, 4 * KIB), new Range(64L * MIB - 4 * KIB, 4 * KIB)),
                    r.ranges(), base.toString());
            assertTrue(AllocatedRanges.withinBudget(r.bytes(), allocated(f)), r.bytes() + " sent vs " + allocated(f) + " allocated");
        }
    }

    @Test
    void aThickImageSendsOnlyWhatWasWrittenAndAnEmptyOrHoleOnlyImageNothing() throws Exception {
        Path thick = dir.resolve("thick.img");
        RUN.run("fallocate", "-l", String.valueOf(32 * MIB), thick.toString());
        write(thick, 5L * MIB, random(128 * KIB, 4));
        assertEquals(List.of(new Range(5L * MIB, 128 * KIB)), RANGES.of(thick).ranges(), "unwritten extents are holes to SEEK_DATA");

        assertEquals(List.of(), RANGES.of(sparse(dir.resolve("holes.img"), 16L * MIB)).ranges());
        assertEquals(List.of(), RANGES.of(sparse(dir.resolve("empty.img"), 0)).ranges());
    }

    @Test
    void withoutSeekDataTheZeroBlocksAreDroppedToStayWithinTheBudget() throws Exception {
        // what a filesystem without SEEK_DATA answers: one data range over the whole file
        Path f = sparse(dir.resolve("a.img"), 8L * MIB);
        write(f, MIB + 100, random(10_000, 5)); // unaligned: the blocks it touches travel
        write(f, 6L * MIB, random(4 * KIB, 6));
        RangeList all = AllocatedRanges.parseSeek("Whence\tResult\nDATA\t0\nHOLE\t" + 8 * MIB + "\n", 8L * MIB);
        assertEquals(List.of(new Range(0, 8L * MIB)), all.ranges());
        assertFalse(AllocatedRanges.withinBudget(all.bytes(), allocated(f)));
        RangeList refined = AllocatedRanges.withoutZeroBlocks(f, all);
        assertEquals(List.of(new Range(MIB, 12 * KIB), new Range(6L * MIB, 4 * KIB)), refined.ranges());
        assertTrue(AllocatedRanges.withinBudget(refined.bytes(), allocated(f)));
        assertEquals(ImageSource.digest(f, all, CHUNK, F), ImageSource.digest(f, refined, CHUNK, F), "the same content either way");
    }

    @Test
    void xfsIoOutputIsParsed() {
        assertEquals(List.of(new Range(0, 100)), AllocatedRanges.parseSeek("Whence\tResult\nDATA\t0\nHOLE\t100\n", 100).ranges());
        assertEquals(List.of(), AllocatedRanges.parseSeek("Whence\tResult\nDATA\tEOF\n", 0).ranges());
        assertEquals(List.of(new Range(4096, 4096)), AllocatedRanges.parseSeek("Whence\tResult\nHOLE\t0\nDATA\t4096\nHOLE\t8192\n", 100_000).ranges());
        TransferException e = assertThrows(TransferException.class, () -> AllocatedRanges.parseSeek("DATA\tx\n", 10));
        assertTrue(e.getMessage().contains("not a number"), e.getMessage());
    }

    // ---- digest -------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(DigestFormat.class)
    void theDigestIsTheSameAcrossASparseCopyAndAThickCopyAndChangesWithOneByte(DigestFormat f) throws Exception {
        Path src = image(dir.resolve("src.img"), 20L * MIB);
        Path sparseCopy = dir.resolve("sparse.img");
        RUN.run("cp", "--sparse=always", src.toString(), sparseCopy.toString());
        Path fullCopy = dir.resolve("full.img");
        // every zero written: all data (dd writes what it reads; cp may reflink or skip zeros)
        RUN.run("dd", "if=" + src, "of=" + fullCopy, "bs=1M", "conv=fsync", "status=none");
        String d = ImageSource.digest(src, RANGES.of(src), CHUNK, f);
        assertEquals(d, ImageSource.digest(sparseCopy, RANGES.of(sparseCopy), CHUNK, f));
        assertNotEquals(RANGES.of(src), RANGES.of(fullCopy), "other allocation");
        assertEquals(d, ImageSource.digest(fullCopy, RANGES.of(fullCopy), CHUNK, f), "the same content, other allocation: the same digest");

        write(sparseCopy, 3L * MIB + 7, new byte[] { 42 });
        assertNotEquals(d, ImageSource.digest(sparseCopy, RANGES.of(sparseCopy), CHUNK, f), "one byte in a hole");
        write(fullCopy, 20L * MIB - 1, new byte[] { 1 });
        assertNotEquals(d, ImageSource.digest(fullCopy, RANGES.of(fullCopy), CHUNK, f), "the last byte");
        assertNotEquals(d, ImageSource.digest(src, RANGES.of(src), 2 * CHUNK, f), "the chunk size is in the header");
        DigestFormat other = f == DigestFormat.CRC_V2 ? DigestFormat.SHA256_V1 : DigestFormat.CRC_V2;
        assertNotEquals(ImageSource.digest(src, RANGES.of(src), CHUNK, f), ImageSource.digest(src, RANGES.of(src), CHUNK, other),
                "the format is in the header");
    }

    // ---- transfer -----------------------------------------------------------------------------

    @Test
    void aTransferCopiesContentAndAllocationSendingOnlyTheAllocatedBytes() throws Exception {
        Path src = image(dir.resolve("src.img"), 40L * MIB);
        Path dst = dir.resolve("dst").resolve("dst.img");
        Files.createDirectories(dst.getParent());
        long sent;
        try (ImageSource s = ImageSource.plan("t1", "snap-1", src, RANGES.of(src), CHUNK, F);
                ImageReceiver r = ImageReceiver.open(dir.resolve("dst"), dst, s.plan(), 40L * MIB)) {
            sent = copy(s, r, Long.MAX_VALUE);
            assertEquals(s.plan().digest(), r.finish());
        }
        assertTrue(sent <= allocated(src) * AllocatedRanges.BUDGET, sent + " sent, " + allocated(src) + " allocated");
        assertEquals(RUN.exec("cmp", src.toString(), dst.toString()).exitCode(), 0, "the same bytes");
        assertEquals(RANGES.of(src), RANGES.of(dst), "the same allocation");
        assertFalse(Files.exists(TransferState.fileOf(dir.resolve("dst"), "t1")), "no progress left once done");
    }

    @Test
    void aCutTransferGoesOnFromWhereItStopped() throws Exception {
        Path src = image(dir.resolve("src.img"), 40L * MIB);
        Path data = Files.createDirectories(dir.resolve("dst"));
        Path dst = data.resolve("dst.img");
        try (ImageSource s = ImageSource.plan("t2", "vol-1", src, RANGES.of(src), CHUNK, F)) {
            TransferPlan plan = s.plan();
            long half = plan.chunks() / 2;
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                copy(s, r, half);
                r.checkpoint();
                for (long i = half; i < half + 3; i++) {
                    r.accept(s.read(i)); // written, but the cut comes before the next checkpoint
                }
            } // the cut: the destination restarts

            // the plan, as the source announces it again after the restart
            TransferPlan again = ImageSource.plan("t2", "vol-1", src, RANGES.of(src), CHUNK, F).plan();
            try (ImageReceiver r = ImageReceiver.open(data, dst, again, again.size())) {
                assertTrue(r.state().resumed());
                assertEquals(half, r.nextChunk(), "goes on at the first chunk not recorded done");
                TransferException e = assertThrows(TransferException.class, () -> r.accept(s.read(half)));
                assertTrue(e.getMessage().contains("not verified yet"), "the chunks written before the cut are in the digest too: " + e.getMessage());
                r.verifyWritten(RANGES.of(dst));
                long chunksSent = 0;
                while (r.nextChunk() < again.chunks()) {
                    r.accept(s.read(r.nextChunk()));
                    chunksSent++;
                }
                assertEquals(again.chunks() - half, chunksSent);
                r.finish();
            }
        }
        assertEquals(0, RUN.exec("cmp", src.toString(), dst.toString()).exitCode());

        // the same ID with another source content is not resumed: the image is made anew
        Path other = image(dir.resolve("other.img"), 40L * MIB);
        try (ImageSource s = ImageSource.plan("t2", "vol-1", other, RANGES.of(other), CHUNK, F);
                ImageReceiver r = ImageReceiver.open(data, dst, s.plan(), s.plan().size())) {
            copy(s, r, 2);
            r.checkpoint();
        }
        try (ImageSource s = ImageSource.plan("t2", "vol-2", src, RANGES.of(src), CHUNK, F);
                ImageReceiver r = ImageReceiver.open(data, dst, s.plan(), s.plan().size())) {
            assertFalse(r.state().resumed(), "another plan under the same ID starts over");
            assertEquals(List.of(), RANGES.of(dst).ranges(), "the image was made anew");
            copy(s, r, Long.MAX_VALUE);
            r.finish();
        }
        assertEquals(0, RUN.exec("cmp", src.toString(), dst.toString()).exitCode());
    }

    /**
     * Every 64 MiB written a checkpoint starts behind the writes (issue 35: the stream no longer
     * stops for the sync). It records the chunks written before its sync began and none written
     * meanwhile, and closing the receiver waits for it: a restart goes on from exactly there.
     */
    @Test
    void aCheckpointBehindTheWritesRecordsTheChunksItsSyncCovered() throws Exception {
        Path src = sparse(dir.resolve("dense.img"), ImageReceiver.CHECKPOINT_BYTES + 16L * MIB);
        for (long at = 0; at < Files.size(src); at += 8 * MIB) {
            write(src, at, random(8 * MIB, at)); // every chunk carries a full chunk of data
        }
        long atCheckpoint = ImageReceiver.CHECKPOINT_BYTES / CHUNK;
        Path data = Files.createDirectories(dir.resolve("dst"));
        Path dst = data.resolve("dst.img");
        try (ImageSource s = ImageSource.plan("t6", "vol-6", src, RANGES.of(src), CHUNK, F)) {
            TransferPlan plan = s.plan();
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                copy(s, r, atCheckpoint + 10); // the checkpoint starts after chunk atCheckpoint - 1; 10 more are written meanwhile
            } // the cut, with no checkpoint of its own
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                assertEquals(atCheckpoint, r.nextChunk(), "goes on after the chunks the checkpoint's sync covered, not the ones written after it began");
                r.verifyWritten(RANGES.of(dst));
                copy(s, r, Long.MAX_VALUE);
                assertEquals(plan.digest(), r.finish());
            }
        }
        assertEquals(0, RUN.exec("cmp", src.toString(), dst.toString()).exitCode());
    }

    /**
     * A node that stops interrupts the thread that fetches, and a FileChannel used on an
     * interrupted thread closes itself: the checkpoint taken then (TransferClient's, with the
     * interrupt cleared) still syncs the image and records the chunks written, so the node goes on
     * from there after its restart, not from 0.
     */
    @Test
    void aCheckpointAfterTheWritersInterruptClosedTheImageStillRecordsTheChunksWritten() throws Exception {
        Path src = image(dir.resolve("src.img"), 40L * MIB);
        Path data = Files.createDirectories(dir.resolve("dst"));
        Path dst = data.resolve("dst.img");
        try (ImageSource s = ImageSource.plan("t4", "vol-1", src, RANGES.of(src), CHUNK, F)) {
            TransferPlan plan = s.plan();
            long written = plan.chunks() / 2;
            while (s.read(written).dataBytes() == 0) {
                written++; // the chunk cut must carry data: a hole is no write
            }
            long cut = written;
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                copy(s, r, cut);
                Chunk next = s.read(cut);
                Thread.currentThread().interrupt(); // the node stops
                assertThrows(TransferException.class, () -> r.accept(next), "the write on the interrupted thread closes the image");
                assertTrue(Thread.interrupted());
                r.checkpoint();
            } finally {
                Thread.interrupted();
            }
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                assertEquals(cut, r.nextChunk(), "goes on after the chunks written before the stop");
                r.verifyWritten(RANGES.of(dst));
                copy(s, r, Long.MAX_VALUE);
                r.finish();
            }
        }
        assertEquals(0, RUN.exec("cmp", src.toString(), dst.toString()).exitCode());
    }

    @Test
    void aResumedTransferVerifiesTheChunksWrittenBeforeTheCut() throws Exception {
        Path src = image(dir.resolve("src.img"), 8L * MIB);
        Path data = Files.createDirectories(dir.resolve("dst"));
        Path dst = data.resolve("dst.img");
        try (ImageSource s = ImageSource.plan("t5", "snap-5", src, RANGES.of(src), CHUNK, F)) {
            TransferPlan plan = s.plan();
            long half = plan.chunks() / 2;
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                copy(s, r, half);
                r.checkpoint();
            } // the cut; meanwhile a byte of a chunk recorded done changes on the destination's disk
            Range first = plan.ranges().ranges().get(0);
            assertTrue(first.offset() < half * CHUNK, "the changed byte is in a chunk written before the cut");
            byte[] b = new byte[1];
            try (RandomAccessFile f = new RandomAccessFile(dst.toFile(), "rw")) {
                f.seek(first.offset() + 5);
                b[0] = (byte) (f.readByte() ^ 0x10);
                f.seek(first.offset() + 5);
                f.write(b);
            }
            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                assertEquals(half, r.nextChunk());
                r.verifyWritten(RANGES.of(dst));
                copy(s, r, Long.MAX_VALUE);
                TransferException e = assertThrows(TransferException.class, r::finish);
                assertEquals(TransferException.Kind.MISMATCH, e.kind(), "a flipped byte written before the cut is found: " + e.getMessage());
                r.abandon();
            }
            assertFalse(Files.exists(dst), "no volume of it");
        }
    }

    // ---- bad input ----------------------------------------------------------------------------

    @Test
    void rangesBeyondTheSizeOrOverlappingAreRefused() {
        TransferException e = assertThrows(TransferException.class, () -> RangeList.of(100, List.of(new Range(90, 20))));
        assertEquals(TransferException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains("[90, 110) ends beyond the image's size 100"), e.getMessage());
        e = assertThrows(TransferException.class, () -> RangeList.of(100, List.of(new Range(0, 50), new Range(40, 20))));
        assertTrue(e.getMessage().contains("[40, 60) overlaps or precedes [0, 50)"), e.getMessage());
        e = assertThrows(TransferException.class, () -> RangeList.of(100, List.of(new Range(50, 10), new Range(0, 10))));
        assertTrue(e.getMessage().contains("must be sorted"), e.getMessage());
        e = assertThrows(TransferException.class, () -> RangeList.of(100, List.of(new Range(-1, 10))));
        assertTrue(e.getMessage().contains("offset must be >= 0"), e.getMessage());
        e = assertThrows(TransferException.class, () -> RangeList.of(100, List.of(new Range(Long.MAX_VALUE, 10))));
        assertEquals(TransferException.Kind.INVALID, e.kind(), "an end that overflows");
        assertEquals(List.of(new Range(0, 30)), RangeList.of(100, List.of(new Range(0, 10), new Range(10, 20))).ranges(), "adjacent: joined");
    }

    @Test
    void aPlanOrChunkThatBreaksTheRulesIsRefusedWithNothingWritten() throws Exception {
        Path src = image(dir.resolve("src.img"), 8L * MIB);
        Path data = Files.createDirectories(dir.resolve("dst"));
        Path dst = data.resolve("dst.img");
        try (ImageSource s = ImageSource.plan("t3", "snap-3", src, RANGES.of(src), CHUNK, F)) {
            TransferPlan plan = s.plan();
            TransferException e = assertThrows(TransferException.class, () -> ImageReceiver.open(data, dst, plan, 16L * MIB));
            assertTrue(e.getMessage().contains("the sizes must match"), e.getMessage());
            e = assertThrows(TransferException.class, () -> new TransferPlan("../etc", "x", 10, CHUNK, RangeList.of(10, List.of()), F, plan.digest()));
            assertTrue(e.getMessage().contains("transfer ID ../etc"), e.getMessage());

            try (ImageReceiver r = ImageReceiver.open(data, dst, plan, plan.size())) {
                Chunk good = s.read(firstChunkWithData(plan));
                // a peer sending more than planned: one segment more than the plan has in the chunk
                List<Segment> more = new ArrayList<>(good.segments());
                Range c = plan.chunk(good.index());
                Segment extra = new Segment(c.end() - 4096, random(4096, 9));
                more.add(extra);
                e = assertThrows(TransferException.class, () -> r.accept(new Chunk(good.index(), more, good.hash())));
                assertEquals(TransferException.Kind.INVALID, e.kind());
                assertTrue(e.getMessage().contains("the plan has"), e.getMessage());
                // a chunk outside the image
                e = assertThrows(TransferException.class, () -> r.accept(new Chunk(plan.chunks(), List.of(), good.hash())));
                assertTrue(e.getMessage().contains("outside the image"), e.getMessage());
                // the planned ranges, other bytes, the hash of the right ones
                List<Segment> tampered = new ArrayList<>(good.segments());
                byte[] bad = tampered.get(0).data().clone();
                bad[0] ^= 1;
                tampered.set(0, new Segment(tampered.get(0).offset(), bad));
                e = assertThrows(TransferException.class, () -> r.accept(new Chunk(good.index(), tampered, good.hash())));
                assertEquals(TransferException.Kind.MISMATCH, e.kind());
                assertEquals(List.of(), RANGES.of(dst).ranges(), "nothing was written");
                assertEquals(0, r.nextChunk());
            }
        }
    }

    @Test
    void contentThatDoesNotHashToTheSourcesDigestIsAnErrorNotAVolume() throws Exception {
        Path src = image(dir.resolve("src.img"), 8L * MIB);
        Path data = Files.createDirectories(dir.resolve("dst"));
        Path dst = data.resolve("dst.img");
        try (ImageSource s = ImageSource.plan("t4", "snap-4", src, RANGES.of(src), CHUNK, F)) {
            TransferPlan real = s.plan();
            // a source that announces another digest than its content has (or content changed under it)
            TransferPlan lying = new TransferPlan("t4", "snap-4", real.size(), real.chunkSize(), real.ranges(), real.format(), "ab".repeat(32));
            try (ImageReceiver r = ImageReceiver.open(data, dst, lying, lying.size())) {
                TransferException e = assertThrows(TransferException.class, () -> r.finish());
                assertTrue(e.getMessage().contains("is not complete"), e.getMessage());
                copy(s, r, Long.MAX_VALUE);
                e = assertThrows(TransferException.class, () -> r.finish());
                assertEquals(TransferException.Kind.MISMATCH, e.kind());
                assertTrue(e.getMessage().contains("differs from the source's " + "ab".repeat(32)), e.getMessage());
                r.abandon();
            }
            assertFalse(Files.exists(dst), "no image left");
            assertFalse(Files.exists(TransferState.fileOf(data, "t4")), "no progress left: a retry starts over");
        }
    }

    // ---- helpers ------------------------------------------------------------------------------

    /** Chunks in order from the destination's next one, at most n; returns the data bytes sent. */
    static long copy(ImageSource s, ImageReceiver r, long n) {
        long sent = 0;
        for (long k = 0; k < n && r.nextChunk() < s.plan().chunks(); k++) {
            Chunk c = s.read(r.nextChunk());
            sent += c.dataBytes();
            r.accept(c);
        }
        return sent;
    }

    static long firstChunkWithData(TransferPlan plan) {
        long i = plan.ranges().ranges().get(0).offset() / plan.chunkSize();
        return i;
    }

    /** A sparse image with data scattered over it: extents of several sizes, some crossing chunk boundaries. */
    static Path image(Path f, long size) throws IOException {
        sparse(f, size);
        Random rnd = new Random(f.getFileName().toString().hashCode());
        for (long at = 64 * KIB; at < size - MIB; at += (1 + rnd.nextInt(8)) * 512L * KIB) {
            int len = (1 + rnd.nextInt(64)) * 4 * KIB;
            write(f, at, random(len, rnd.nextLong()));
        }
        return f;
    }

    static Path sparse(Path f, long size) throws IOException {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.setLength(size);
        }
        return f;
    }

    static void write(Path f, long at, byte[] data) throws IOException {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.seek(at);
            r.write(data);
            r.getFD().sync();
        }
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        b[0] = 1; // never an all-zero block by chance
        b[n - 1] = 1;
        return b;
    }

    static long allocated(Path f) {
        String[] s = RUN.run("stat", "-c", "%b %B", f.toString()).trim().split("\\s+");
        return Long.parseLong(s[0]) * Long.parseLong(s[1]);
    }
}
