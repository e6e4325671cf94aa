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
 * {@link #MAX_KEPT} data chunks are kept, 4 MiB of SHA-256 hashes or 1 MiB of v2 ones (128 GiB of data at 1 MiB chunks): plans
 * are held in memory for the life of the node's process, whose heap is small. Chunks after those are
 * hashed again when sent, as before.
 */
public final class ChunkHashes {

    static final int MAX_KEPT = 1 << 17;
    private final int hashBytes;
    private long[] indexes = new long[64];
    private byte[] hashes;
    private int count;

    /** Keeps hashes of this format's length. */
    public ChunkHashes(DigestFormat format) {
        this.hashBytes = format.hashBytes();
        this.hashes = new byte[64 * hashBytes];
    }

    /** Keeps the hash of data chunk i (chunks added in increasing order); past the bound it is not kept. */
    void add(long index, byte[] hash) {
        if (hash.length != hashBytes) {
            throw new IllegalStateException("a hash of " + hash.length + " bytes kept with hashes of " + hashBytes);
        }
        if (count == MAX_KEPT) {
            return;
        }
        if (count > 0 && index <= indexes[count - 1]) {
            throw new IllegalStateException("chunk " + index + " added after chunk " + indexes[count - 1]);
        }
        if (count == indexes.length) {
            indexes = Arrays.copyOf(indexes, Math.min(MAX_KEPT, count * 2));
            hashes = Arrays.copyOf(hashes, indexes.length * hashBytes);
        }
        indexes[count] = index;
        System.arraycopy(hash, 0, hashes, count * hashBytes, hashBytes);
        count++;
    }

    /** The kept hash of chunk i, or null (not a data chunk, or past the bound). */
    byte[] of(long index) {
        int at = Arrays.binarySearch(indexes, 0, count, index);
        return at < 0 ? null : Arrays.copyOfRange(hashes, at * hashBytes, (at + 1) * hashBytes);
    }

    int kept() {
        return count;
    }
}
