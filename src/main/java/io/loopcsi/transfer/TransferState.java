package io.loopcsi.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.PoolModes;

/**
 * A destination's progress of one transfer, in its data dir as {@code transfers/<transfer ID>.json}:
 * the plan and which chunks are written and synced. Saved atomically (temp file, fsync, rename,
 * fsync dir), and only after the image's data of the chunks it marks done is synced, so after a
 * cut (network, either side's restart) the transfer goes on from the first chunk not done: a
 * chunk written but not yet recorded is sent and written again, which is harmless.
 */
public final class TransferState {

    static final String DIR = "transfers";
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** The file's form. */
    // read and written by Jackson: registered for the native executable (`make test-native` found it unregistered)
    @io.quarkus.runtime.annotations.RegisterForReflection
    record Saved(String transferId, String source, long size, int chunkSize, List<long[]> ranges, String digestFormat, String digest,
            String done) {
    }

    private final Path file;
    private final TransferPlan plan;
    private final BitSet done;

    private TransferState(Path file, TransferPlan plan, BitSet done) {
        this.file = file;
        this.plan = plan;
        this.done = done;
    }

    static Path fileOf(Path dataDir, String transferId) {
        return PoolDirectory.transferProgress(dataDir, transferId);
    }

    /**
     * The saved state of this plan's transfer, or a fresh one. A saved state of another plan under
     * the same ID (the source changed, or another size) is not resumed: resumed = false, and the
     * caller starts the image over. An unreadable file is treated the same way (nothing is lost:
     * the transfer is only sent again).
     */
    public static TransferState openOrStart(Path dataDir, TransferPlan plan) {
        Path file = fileOf(dataDir, plan.transferId());
        try {
            Saved s = JSON.readValue(Files.readAllBytes(file), Saved.class);
            // a progress file of an earlier release names no format: it was made in v1
            DigestFormat format = s.digestFormat() == null ? DigestFormat.SHA256_V1 : DigestFormat.named(s.digestFormat()).orElse(null);
            TransferPlan saved = format == null ? null : new TransferPlan(s.transferId(), s.source(), s.size(), s.chunkSize(), RangeList.of(s.size(),
                    s.ranges().stream().map(r -> new Range(r[0], r[1])).toList()), format, s.digest());
            if (saved != null && saved.equals(plan)) {
                return new TransferState(file, plan, BitSet.valueOf(Base64.getDecoder().decode(s.done())));
            }
        } catch (NoSuchFileException e) {
            // a new transfer
        } catch (IOException | RuntimeException e) {
            // unreadable or of an older format: start over
        }
        return new TransferState(file, plan, new BitSet());
    }

    /**
     * The digest format of this transfer's saved progress, if any: a destination resuming offers it
     * first, so that a source of a release that plans in another format by default answers the same
     * plan and the transfer goes on instead of starting over.
     */
    public static Optional<DigestFormat> savedFormat(Path dataDir, String transferId) {
        try {
            Saved s = JSON.readValue(Files.readAllBytes(fileOf(dataDir, transferId)), Saved.class);
            return s.digestFormat() == null ? Optional.of(DigestFormat.SHA256_V1) : DigestFormat.named(s.digestFormat());
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // none, or unreadable: openOrStart starts over
        }
    }

    /** A state with no chunk done (the saved one, if any, is overwritten at the first checkpoint). */
    static TransferState fresh(Path dataDir, TransferPlan plan) {
        return new TransferState(fileOf(dataDir, plan.transferId()), plan, new BitSet());
    }

    public TransferPlan plan() {
        return plan;
    }

    public boolean isDone(long chunk) {
        return done.get(Math.toIntExact(chunk));
    }

    void markDone(long chunk) {
        done.set(Math.toIntExact(chunk));
    }

    public long doneChunks() {
        return done.cardinality();
    }

    /** Whether any chunk was recorded done: a transfer that goes on, not one that starts. */
    public boolean resumed() {
        return !done.isEmpty();
    }

    /** The first chunk not done (= chunks() when all are). */
    public long nextChunk() {
        return Math.min(done.nextClearBit(0), plan.chunks());
    }

    public boolean complete() {
        return nextChunk() == plan.chunks();
    }

    /** Writes the state atomically; the caller has synced the image's data first. */
    void save() {
        save(done);
    }

    /** A copy of the chunks done so far (what a checkpoint that runs behind the writes records: {@link #save(BitSet)}). */
    BitSet doneCopy() {
        return (BitSet) done.clone();
    }

    /**
     * Writes the state atomically with {@code doneChunks} as the chunks done: a copy taken before the
     * caller synced the image's data (the chunks written since are recorded by a later save).
     */
    void save(BitSet doneChunks) {
        List<long[]> ranges = new ArrayList<>();
        plan.ranges().ranges().forEach(r -> ranges.add(new long[] { r.offset(), r.length() }));
        Saved s = new Saved(plan.transferId(), plan.source(), plan.size(), plan.chunkSize(), ranges, plan.format().wireName(), plan.digest(),
                Base64.getEncoder().encodeToString(doneChunks.toByteArray()));
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.createDirectories(file.getParent());
            PoolModes.createPrivateFile(tmp);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(JSON.writeValueAsBytes(s));
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            PoolDirectory.rename(tmp, file);
        } catch (IOException e) {
            throw TransferException.state("cannot save the state of transfer " + plan.transferId() + " in " + file + ": " + e.getMessage(), e);
        }
    }

    /** Forgets a transfer's progress, if any (the destination gave it up: its image is deleted, a retry starts over). */
    public static void forget(Path dataDir, String transferId) {
        new TransferState(fileOf(dataDir, transferId), null, new BitSet()).delete();
    }

    /** Forgets the transfer (done, abandoned or failed its digest). */
    void delete() {
        try {
            if (Files.deleteIfExists(file)) {
                PoolDirectory.fsyncDir(file.getParent());
            }
            Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".tmp"));
        } catch (IOException e) {
            throw TransferException.state("cannot delete " + file + ": " + e.getMessage(), e);
        }
    }
}
