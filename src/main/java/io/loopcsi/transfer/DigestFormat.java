package io.loopcsi.transfer;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * How a chunk of an image is hashed for a transfer's content digest ({@link ContentDigest}); the
 * destination offers the formats it knows in its {@code Plan} request, the source answers with the
 * one it made the plan in (the first it knows of those offered; {@link #SHA256_V1} when none is
 * offered: a destination of an earlier release, which knows only that one).
 *
 * <p>Why a second format (issue 35's speed goal): the chunk hash is computed twice per byte moved (the
 * source's plan pass, the destination's check before writing), and SHA-256 was ~30 % of a
 * transfer's CPU on a JVM with SHA-NI (1.5 GB/s a core) and more in the native executable, whose
 * SHA-256 is compiled Java (no SHA-NI baseline). What the chunk hash must catch is accidental: a bug
 * at either end (a short or misplaced read or write), memory or disk corruption of what was read,
 * and a source changed after its plan. Forgery is not its job: every byte travels inside the pool's
 * mutual TLS (AES-GCM authenticates each record), and a source node that lies is inside the trust
 * boundary anyway. {@link #CRC_V2} is CRC-32 (IEEE) and CRC-32C of the chunk side by side, 8 bytes:
 * two CRCs with coprime generators together check the chunk modulo their product, a 64-bit
 * generator, so every burst of up to 32 bits is caught and a random corruption slips through with a
 * chance of 2^-64 per chunk; both are JDK intrinsics (PCLMUL folding, ~50 GB/s here). The digest
 * over the chunk hashes stays SHA-256 in both formats (a few bytes a MiB).
 */
public enum DigestFormat {

    /** SHA-256 of the chunk's logical bytes, 32 bytes: the format of every release before the v2 one. */
    SHA256_V1("loopcsi-content-sha256-v1", 32) {
        @Override
        public ChunkHasher hasher() {
            MessageDigest d = sha256();
            return new ChunkHasher() {
                @Override
                public void update(byte[] b, int off, int len) {
                    d.update(b, off, len);
                }

                @Override
                public void update(ByteBuffer b) {
                    d.update(b);
                }

                @Override
                public byte[] finish() {
                    return d.digest();
                }
            };
        }
    },

    /** CRC-32 then CRC-32C of the chunk's logical bytes, each big-endian, 8 bytes. */
    CRC_V2("loopcsi-content-crc32-crc32c-v2", 8) {
        @Override
        public ChunkHasher hasher() {
            CRC32 ieee = new CRC32();
            CRC32C castagnoli = new CRC32C();
            return new ChunkHasher() {
                @Override
                public void update(byte[] b, int off, int len) {
                    ieee.update(b, off, len);
                    castagnoli.update(b, off, len);
                }

                @Override
                public void update(ByteBuffer b) {
                    ByteBuffer again = b.duplicate();
                    ieee.update(b);
                    castagnoli.update(again);
                }

                @Override
                public byte[] finish() {
                    return ByteBuffer.allocate(8).putInt((int) ieee.getValue()).putInt((int) castagnoli.getValue()).array();
                }
            };
        }
    };

    /** What a destination of this release offers, best first. */
    public static final List<DigestFormat> OFFERED = List.of(CRC_V2, SHA256_V1);

    private static final byte[] ZEROS = new byte[64 * 1024];

    private final String wireName;
    private final int hashBytes;
    private final Map<Long, byte[]> zeroChunks = new ConcurrentHashMap<>();

    DigestFormat(String wireName, int hashBytes) {
        this.wireName = wireName;
        this.hashBytes = hashBytes;
    }

    /** The format's name on the wire, in the saved progress and at the head of the digest. */
    public String wireName() {
        return wireName;
    }

    /** The length of one chunk's hash. */
    public int hashBytes() {
        return hashBytes;
    }

    /** A hasher of one chunk's logical bytes, fed in order. */
    public abstract ChunkHasher hasher();

    /** The hash of a chunk of this many zeros (a hole), computed once per length. */
    byte[] zeroChunk(long length) {
        return zeroChunks.computeIfAbsent(length, n -> {
            ChunkHasher h = hasher();
            h.zeros(n);
            return h.finish();
        }).clone();
    }

    /** The format of this name, if this release knows it. */
    public static Optional<DigestFormat> named(String wireName) {
        for (DigestFormat f : values()) {
            if (f.wireName.equals(wireName)) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /**
     * The source's choice from a destination's offer: the first format offered that this release
     * knows; {@link #SHA256_V1} when nothing is offered (a destination of an earlier release) or
     * nothing offered is known (the destination then refuses the plan, naming the format).
     */
    public static DigestFormat choose(List<String> offered) {
        for (String name : offered) {
            Optional<DigestFormat> f = named(name);
            if (f.isPresent()) {
                return f.get();
            }
        }
        return SHA256_V1;
    }

    /** The hashing of one chunk: its bytes in order, holes fed as zeros. */
    public interface ChunkHasher {
        void update(byte[] b, int off, int len);

        /** Hashes the buffer's remaining bytes and consumes them. */
        void update(ByteBuffer b);

        byte[] finish();

        default void update(byte[] b) {
            update(b, 0, b.length);
        }

        default void zeros(long n) {
            while (n > 0) {
                int k = (int) Math.min(n, ZEROS.length);
                update(ZEROS, 0, k);
                n -= k;
            }
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
