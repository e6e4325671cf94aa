package io.loopcsi.transfer;

import java.util.Arrays;

/**
 * The hashes of a source's data chunks as its plan computed them, kept so that the source hashes
 * each chunk once: it sends a chunk with the hash its plan's digest was composed of, and the
 * destination checks the chunk's data against it. A chunk whose data changed since the plan (the
 * image was written after all) is then refused at the destination, chunk by chunk, instead of
 * being hashed anew and refused only by the digest at the end.
 *
 * <p>Holes need no entry (a chunk without data has the precomputed hash of a zero chunk). At most
 * {@link #MAX_KEPT} data chunks are kept, 4 MiB of hashes (128 GiB of data at 1 MiB chunks): plans
 * are held in memory for the life of the node's process, whose heap is small. Chunks after those are
 * hashed again when sent, as before.
 */
public final class ChunkHashes {

    static final int MAX_KEPT = 1 << 17;
    private static final int HASH = 32;

    private long[] indexes = new long[64];
    private byte[] hashes = new byte[64 * HASH];
    private int count;

    /** Keeps the hash of data chunk i (chunks added in increasing order); past the bound it is not kept. */
    void add(long index, byte[] hash) {
        if (count == MAX_KEPT) {
            return;
        }
        if (count > 0 && index <= indexes[count - 1]) {
            throw new IllegalStateException("chunk " + index + " added after chunk " + indexes[count - 1]);
        }
        if (count == indexes.length) {
            indexes = Arrays.copyOf(indexes, Math.min(MAX_KEPT, count * 2));
            hashes = Arrays.copyOf(hashes, indexes.length * HASH);
        }
        indexes[count] = index;
        System.arraycopy(hash, 0, hashes, count * HASH, HASH);
        count++;
    }

    /** The kept hash of chunk i, or null (not a data chunk, or past the bound). */
    byte[] of(long index) {
        int at = Arrays.binarySearch(indexes, 0, count, index);
        return at < 0 ? null : Arrays.copyOfRange(hashes, at * HASH, (at + 1) * HASH);
    }

    int kept() {
        return count;
    }
}
