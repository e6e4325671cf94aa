package io.loopcsi.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
        return new ImageSource(image, plan, hashes == null ? new ChunkHashes(plan.format()) : hashes);
    }

    /**
     * Makes the plan: one pass over the data ranges for the digest (holes cost nothing), keeping the
     * data chunks' hashes, then the image is ready to be read: the chunks it reads carry the kept
     * hashes, so each chunk is hashed once on this side.
     *
     * <p>The pass hashes data chunks on {@link #planThreads()} threads at once (the chunks' hashes
     * are independent; the digest composes them in order here): the destination waits for the
     * whole pass before the first chunk is sent, and issue 35's measurements had it on one core
     * for a quarter of a transfer's time. Memory: one {@link #PLAN_READ} buffer per thread and at
     * most {@code 2 x threads} hashes pending, whatever the chunk size.
     */
    public static ImageSource plan(String transferId, String source, Path image, RangeList ranges, int chunkSize, DigestFormat format) {
        String provisional = "0".repeat(64);
        ImageSource s = new ImageSource(image, new TransferPlan(transferId, source, ranges.size(), chunkSize, ranges, format, provisional),
                new ChunkHashes(format));
        int threads = planThreads();
        ExecutorService pool = threads > 1 ? Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "transfer-plan-" + transferId);
            t.setDaemon(true);
            return t;
        }) : null;
        try {
            BlockingQueue<ByteBuffer> buffers = new ArrayBlockingQueue<>(threads);
            for (int i = 0; i < threads; i++) {
                // direct: read without the JDK's staging copy of a heap buffer, and hashed where it lies (CRC32 takes its address)
                buffers.add(ByteBuffer.allocateDirect(PLAN_READ));
            }
            ContentDigest d = new ContentDigest(ranges.size(), chunkSize, format);
            ChunkHashes kept = new ChunkHashes(format);
            ArrayDeque<Pending> pending = new ArrayDeque<>();
            for (long i = 0; i < s.plan.chunks(); i++) {
                long index = i;
                Future<byte[]> f = pool == null || s.isHole(index) ? CompletableFuture.completedFuture(s.hashOf(index, buffers))
                        : pool.submit(() -> s.hashOf(index, buffers));
                pending.addLast(new Pending(index, f));
                if (pending.size() >= 2 * threads) {
                    compose(pending.removeFirst(), s, d, kept);
                }
            }
            while (!pending.isEmpty()) {
                compose(pending.removeFirst(), s, d, kept);
            }
            TransferPlan made = new TransferPlan(transferId, source, ranges.size(), chunkSize, ranges, format, d.hex());
            s.close();
            return new ImageSource(image, made, kept);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        } finally {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
    }

    /** Bytes a plan thread reads at once. */
    static final int PLAN_READ = 1 << 20;

    /** Threads of a plan pass: the node's processors (its CPU limit, as the JVM sees it), at most 4. */
    static int planThreads() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    private record Pending(long index, Future<byte[]> hash) {
    }

    private static void compose(Pending p, ImageSource s, ContentDigest d, ChunkHashes kept) {
        byte[] hash;
        try {
            hash = p.hash().get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw TransferException.state("interrupted while planning transfer " + s.plan.transferId(), e);
        }
        d.add(p.index(), hash);
        if (!s.isHole(p.index())) {
            kept.add(p.index(), hash);
        }
    }

    private boolean isHole(long index) {
        Range c = plan.chunk(index);
        return plan.ranges().within(c.offset(), c.end()).isEmpty();
    }

    /**
     * The hash of chunk i as {@link ContentDigest#chunkHash} makes it of the chunk {@link #read}
     * returns (the same bytes in the same order), read through a buffer of {@code buffers} instead
     * of into one array of the chunk's size.
     */
    private byte[] hashOf(long index, BlockingQueue<ByteBuffer> buffers) {
        Range c = plan.chunk(index);
        List<Range> data = plan.ranges().within(c.offset(), c.end());
        if (data.isEmpty()) {
            return ContentDigest.chunkHash(plan.format(), c.offset(), c.length(), List.of());
        }
        ByteBuffer buf = buffers.remove(); // one per thread: never empty here
        try {
            DigestFormat.ChunkHasher h = plan.format().hasher();
            long at = c.offset();
            for (Range r : data) {
                h.zeros(r.offset() - at);
                for (long pos = r.offset(); pos < r.end();) {
                    buf.clear().limit((int) Math.min(buf.capacity(), r.end() - pos));
                    AllocatedRanges.readFully(channel, buf, pos);
                    int n = buf.position();
                    h.update(buf.flip());
                    pos += n;
                }
                at = r.end();
            }
            h.zeros(c.end() - at);
            return h.finish();
        } catch (IOException e) {
            throw TransferException.state("cannot read " + image + " at chunk " + index + ": " + e.getMessage(), e);
        } finally {
            buffers.add(buf);
        }
    }

    /** The content digest of an image from its own data ranges, in one pass (what tests and the bench compare a copy with). */
    public static String digest(Path image, RangeList ranges, int chunkSize, DigestFormat format) {
        try (ImageSource s = plan("digest", "", image, ranges, chunkSize, format)) {
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
        return read(index, null);
    }

    /**
     * Chunk i as {@link #read(long)}, its segments read into slices of {@code into} when their bytes
     * fit in it (else into arrays of their own): the caller reuses {@code into} for the next chunk
     * once it is done with this one (the source's Pump, after gRPC serialized the chunk).
     */
    public Chunk read(long index, byte[] into) {
        Range c = plan.chunk(index);
        List<Range> data = plan.ranges().within(c.offset(), c.end());
        long bytes = 0;
        for (Range r : data) {
            bytes += r.length();
        }
        boolean reuse = into != null && bytes <= into.length;
        List<Segment> segments = new ArrayList<>(data.size());
        try {
            int at = 0;
            for (Range r : data) {
                int length = (int) r.length();
                byte[] array = reuse ? into : new byte[length];
                int from = reuse ? at : 0;
                AllocatedRanges.readFully(channel, ByteBuffer.wrap(array, from, length), r.offset());
                segments.add(new Segment(r.offset(), array, from, length));
                at += reuse ? length : 0;
            }
        } catch (IOException e) {
            throw TransferException.state("cannot read " + image + " at chunk " + index + ": " + e.getMessage(), e);
        }
        byte[] hash = segments.isEmpty() ? null : hashes.of(index);
        return new Chunk(index, segments, hash != null ? hash : ContentDigest.chunkHash(plan.format(), c.offset(), c.length(), segments));
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
