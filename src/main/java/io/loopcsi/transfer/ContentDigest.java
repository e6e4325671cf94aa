package io.loopcsi.transfer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The digest both ends compute of an image's content, each from its own file:
 * SHA-256 over a header (format, size, chunk size) followed by the SHA-256 of every chunk of the
 * logical content in order, holes read as zeros.
 *
 * <p>Why over the logical content and not over the (offset, length, data) records sent: the two
 * files need not have the same allocation (a thick destination is allocated in full; the
 * filesystems may split extents differently; a block of written zeros is data on one side and
 * may be a hole on the other), and a digest of records would differ for the same content. Why
 * chunked: a hole costs one precomputed hash of a zero chunk instead of a pass of SHA-256 over
 * its zeros (a 1 TiB thin image with 1 GiB written hashes ~1 GiB), and each chunk's hash travels
 * with it, so the destination refuses a bad chunk before writing it and a resumed transfer need
 * not re-read what it already checked.
 */
public final class ContentDigest {

    private static final byte[] FORMAT = "loopcsi-content-sha256-v1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ZEROS = new byte[64 * 1024];
    private static final Map<Long, byte[]> ZERO_CHUNKS = new ConcurrentHashMap<>();

    private final MessageDigest outer = sha256();
    private final long size;
    private final int chunkSize;
    private long next;

    /** Starts the digest of an image of this size in chunks of this size; chunk hashes are then {@link #add}ed in order. */
    public ContentDigest(long size, int chunkSize) {
        this.size = size;
        this.chunkSize = chunkSize;
        outer.update(FORMAT);
        outer.update(ByteBuffer.allocate(12).putLong(size).putInt(chunkSize).array());
    }

    public void add(long index, byte[] chunkHash) {
        if (index != next) {
            throw new IllegalStateException("chunk " + index + " hashed out of order (expected " + next + ")");
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
     * The hash of the chunk [start, start + length): the segments' bytes where they are, zeros
     * elsewhere. The segments must be sorted, non-overlapping and inside the chunk (the caller checks).
     */
    public static byte[] chunkHash(long start, long length, List<Segment> segments) {
        if (segments.isEmpty()) {
            return ZERO_CHUNKS.computeIfAbsent(length, ContentDigest::zeroHash).clone();
        }
        MessageDigest d = sha256();
        long at = start;
        for (Segment s : segments) {
            zeros(d, s.offset() - at);
            d.update(s.buffer());
            at = s.end();
        }
        zeros(d, start + length - at);
        return d.digest();
    }

    private static byte[] zeroHash(long length) {
        MessageDigest d = sha256();
        zeros(d, length);
        return d.digest();
    }

    static void zeros(MessageDigest d, long n) {
        while (n > 0) {
            int k = (int) Math.min(n, ZEROS.length);
            d.update(ZEROS, 0, k);
            n -= k;
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }
}
