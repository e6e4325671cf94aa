package io.loopcsi.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The source's side: reads an image (a snapshot or a volume, not written meanwhile) chunk by
 * chunk, only its planned data ranges, each chunk with its hash. Any chunk can be read in any
 * order, so a resumed transfer starts at the first chunk the destination lacks.
 */
public final class ImageSource implements AutoCloseable {

    private final Path image;
    private final TransferPlan plan;
    private final ChunkHashes hashes;
    private final FileChannel channel;

    private ImageSource(Path image, TransferPlan plan, ChunkHashes hashes) {
        this.image = image;
        this.plan = plan;
        this.hashes = hashes;
        try {
            this.channel = FileChannel.open(image, StandardOpenOption.READ);
        } catch (IOException e) {
            throw TransferException.state("cannot open " + image + ": " + e.getMessage(), e);
        }
    }

    /**
     * Opens the image for a plan already made, with the chunk hashes its plan pass kept
     * ({@link #hashes()}; null: none kept, every chunk is hashed when read).
     */
    public static ImageSource open(Path image, TransferPlan plan, ChunkHashes hashes) {
        return new ImageSource(image, plan, hashes == null ? new ChunkHashes() : hashes);
    }

    /**
     * Makes the plan: one pass over the data ranges for the digest (holes cost nothing), keeping the
     * data chunks' hashes, then the image is ready to be read: the chunks it reads carry the kept
     * hashes, so each chunk is hashed once on this side.
     */
    public static ImageSource plan(String transferId, String source, Path image, RangeList ranges, int chunkSize) {
        String provisional = "0".repeat(64);
        ImageSource s = new ImageSource(image, new TransferPlan(transferId, source, ranges.size(), chunkSize, ranges, provisional),
                new ChunkHashes());
        try {
            ContentDigest d = new ContentDigest(ranges.size(), chunkSize);
            ChunkHashes kept = new ChunkHashes();
            for (long i = 0; i < s.plan.chunks(); i++) {
                Chunk c = s.read(i);
                d.add(i, c.hash());
                if (!c.segments().isEmpty()) {
                    kept.add(i, c.hash());
                }
            }
            TransferPlan made = new TransferPlan(transferId, source, ranges.size(), chunkSize, ranges, d.hex());
            s.close();
            return new ImageSource(image, made, kept);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** The content digest of an image from its own data ranges, in one pass (what tests and the bench compare a copy with). */
    public static String digest(Path image, RangeList ranges, int chunkSize) {
        try (ImageSource s = plan("digest", "", image, ranges, chunkSize)) {
            return s.plan().digest();
        }
    }

    public TransferPlan plan() {
        return plan;
    }

    /** The data chunks' hashes the plan pass kept (to open the image again for the same plan). */
    public ChunkHashes hashes() {
        return hashes;
    }

    /** Chunk i: its data segments (read from the image) and its hash (the plan's, where kept; else computed from the data read). */
    public Chunk read(long index) {
        Range c = plan.chunk(index);
        List<Segment> segments = new ArrayList<>();
        try {
            for (Range r : plan.ranges().within(c.offset(), c.end())) {
                ByteBuffer buf = ByteBuffer.allocate((int) r.length());
                AllocatedRanges.readFully(channel, buf, r.offset());
                segments.add(new Segment(r.offset(), buf.array()));
            }
        } catch (IOException e) {
            throw TransferException.state("cannot read " + image + " at chunk " + index + ": " + e.getMessage(), e);
        }
        byte[] hash = segments.isEmpty() ? null : hashes.of(index);
        return new Chunk(index, segments, hash != null ? hash : ContentDigest.chunkHash(c.offset(), c.length(), segments));
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // read-only: nothing to lose
        }
    }
}
