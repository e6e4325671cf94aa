package io.loopcsi.transfer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

/**
 * The digest both ends compute of an image's content, each from its own file: SHA-256 over a
 * header (the {@link DigestFormat}'s name, size, chunk size) followed by the hash of every chunk of
 * the logical content in order (the format's chunk hash: SHA-256 in v1, CRC-32 and CRC-32C in v2),
 * holes read as zeros.
 *
 * <p>Why over the logical content and not over the (offset, length, data) records sent: the two
 * files need not have the same allocation (a thick destination is allocated in full; the
 * filesystems may split extents differently; a block of written zeros is data on one side and
 * may be a hole on the other), and a digest of records would differ for the same content. Why
 * chunked: a hole costs one precomputed hash of a zero chunk instead of a pass over its zeros
 * (a 1 TiB thin image with 1 GiB written hashes ~1 GiB), and each chunk's hash travels
 * with it, so the destination refuses a bad chunk before writing it and a resumed transfer need
 * not re-read what it already checked.
 */
public final class ContentDigest {

    private final MessageDigest outer = DigestFormat.sha256();
    private final DigestFormat format;
    private final long size;
    private final int chunkSize;
    private long next;

    /** Starts the digest of an image of this size in chunks of this size; chunk hashes are then {@link #add}ed in order. */
    public ContentDigest(long size, int chunkSize, DigestFormat format) {
        this.format = format;
        this.size = size;
        this.chunkSize = chunkSize;
        outer.update(format.wireName().getBytes(StandardCharsets.US_ASCII));
        outer.update(ByteBuffer.allocate(12).putLong(size).putInt(chunkSize).array());
    }

    public void add(long index, byte[] chunkHash) {
        if (index != next) {
            throw new IllegalStateException("chunk " + index + " hashed out of order (expected " + next + ")");
        }
        if (chunkHash.length != format.hashBytes()) {
            throw new IllegalStateException("a chunk hash of " + chunkHash.length + " bytes in a digest of format " + format.wireName());
        }
        outer.update(chunkHash);
        next++;
    }

    /** The digest as lower-case hex, once every chunk has been added. */
    public String hex() {
        long chunks = chunks(size, chunkSize);
        if (next != chunks) {
            throw new IllegalStateException(next + " of " + chunks + " chunks hashed");
        }
        return HexFormat.of().formatHex(outer.digest());
    }

    static long chunks(long size, int chunkSize) {
        return (size + chunkSize - 1) / chunkSize;
    }

    /**
     * The hash of the chunk [start, start + length) in this format: the segments' bytes where they
     * are, zeros elsewhere. The segments must be sorted, non-overlapping and inside the chunk (the
     * caller checks).
     */
    public static byte[] chunkHash(DigestFormat format, long start, long length, List<Segment> segments) {
        if (segments.isEmpty()) {
            return format.zeroChunk(length);
        }
        DigestFormat.ChunkHasher h = format.hasher();
        long at = start;
        for (Segment s : segments) {
            h.zeros(s.offset() - at);
            h.update(s.buffer());
            at = s.end();
        }
        h.zeros(start + length - at);
        return h.finish();
    }
}
