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
    private final FileChannel channel;

    private ImageSource(Path image, TransferPlan plan) {
        this.image = image;
        this.plan = plan;
        try {
            this.channel = FileChannel.open(image, StandardOpenOption.READ);
        } catch (IOException e) {
            throw TransferException.state("cannot open " + image + ": " + e.getMessage(), e);
        }
    }

    /** Opens the image for a plan already made (the transfer resumed after the source's restart). */
    public static ImageSource open(Path image, TransferPlan plan) {
        return new ImageSource(image, plan);
    }

    /** Makes the plan: one pass over the data ranges for the digest (holes cost nothing), then the image is ready to be read. */
    public static ImageSource plan(String transferId, String source, Path image, RangeList ranges, int chunkSize) {
        String provisional = "0".repeat(64);
        ImageSource s = new ImageSource(image, new TransferPlan(transferId, source, ranges.size(), chunkSize, ranges, provisional));
        try {
            ContentDigest d = new ContentDigest(ranges.size(), chunkSize);
            for (long i = 0; i < s.plan.chunks(); i++) {
                d.add(i, s.read(i).hash());
            }
            TransferPlan made = new TransferPlan(transferId, source, ranges.size(), chunkSize, ranges, d.hex());
            s.close();
            return new ImageSource(image, made);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** The content digest of an image from its own data ranges (what the destination computes of what it wrote). */
    public static String digest(Path image, RangeList ranges, int chunkSize) {
        try (ImageSource s = plan("digest", "", image, ranges, chunkSize)) {
            return s.plan().digest();
        }
    }

    public TransferPlan plan() {
        return plan;
    }

    /** Chunk i: its data segments (read from the image) and its hash. */
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
        return new Chunk(index, segments, ContentDigest.chunkHash(c.offset(), c.length(), segments));
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
