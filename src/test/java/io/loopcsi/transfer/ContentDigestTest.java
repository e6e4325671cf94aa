package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The digest's definition, pinned against SHA-256 of the logical bytes: what both ends (and older nodes) must agree on. */
class ContentDigestTest {

    static final int CHUNK = 64 * 1024;

    @Test
    void aChunkHashIsTheSha256OfItsLogicalBytesHolesReadAsZeros() throws Exception {
        byte[] a = random(3000, 1);
        byte[] b = random(10, 2);
        long start = 5L * CHUNK;
        byte[] logical = new byte[CHUNK];
        System.arraycopy(a, 0, logical, 100, a.length);
        System.arraycopy(b, 0, logical, CHUNK - b.length, b.length); // a range ending at the chunk's end
        byte[] h = ContentDigest.chunkHash(start, CHUNK, List.of(new Segment(start + 100, a), new Segment(start + CHUNK - b.length, b)));
        assertArrayEquals(sha256(logical), h);

        assertArrayEquals(sha256(new byte[CHUNK]), ContentDigest.chunkHash(0, CHUNK, List.of()), "a hole");
        assertArrayEquals(sha256(new byte[1234]), ContentDigest.chunkHash(9L * CHUNK, 1234, List.of()), "a short last chunk of holes");
        assertArrayEquals(sha256(new byte[CHUNK]), ContentDigest.chunkHash(0, CHUNK, List.of(new Segment(0, new byte[CHUNK]))),
                "written zeros hash as a hole: the same content, other allocation");
    }

    @Test
    void aFlippedByteChangesTheChunkHash() {
        byte[] a = random(CHUNK, 3);
        byte[] h = ContentDigest.chunkHash(0, CHUNK, List.of(new Segment(0, a)));
        for (int at : new int[] { 0, 1, CHUNK / 2, CHUNK - 1 }) {
            byte[] flipped = a.clone();
            flipped[at] ^= 1;
            assertFalse(Arrays.equals(h, ContentDigest.chunkHash(0, CHUNK, List.of(new Segment(0, flipped)))), "byte " + at);
        }
        assertFalse(Arrays.equals(h, ContentDigest.chunkHash(CHUNK, CHUNK, List.of(new Segment(CHUNK + 1, Arrays.copyOf(a, CHUNK - 1))))),
                "the same bytes one byte further");
    }

    @Test
    void theDigestIsSha256OfTheHeaderAndTheChunkHashesInOrder() throws Exception {
        long size = 2L * CHUNK + 100; // the last chunk is short
        byte[][] hashes = { random(32, 4), random(32, 5), random(32, 6) };
        ContentDigest d = new ContentDigest(size, CHUNK);
        for (int i = 0; i < 3; i++) {
            d.add(i, hashes[i]);
        }
        MessageDigest m = MessageDigest.getInstance("SHA-256");
        m.update("loopcsi-content-sha256-v1".getBytes(StandardCharsets.US_ASCII));
        m.update(ByteBuffer.allocate(12).putLong(size).putInt(CHUNK).array());
        for (byte[] h : hashes) {
            m.update(h);
        }
        assertEquals(HexFormat.of().formatHex(m.digest()), d.hex());

        ContentDigest early = new ContentDigest(size, CHUNK);
        early.add(0, hashes[0]);
        assertThrows(IllegalStateException.class, early::hex, "not every chunk hashed");
        assertThrows(IllegalStateException.class, () -> early.add(2, hashes[2]), "a chunk skipped");
        assertThrows(IllegalStateException.class, () -> early.add(0, hashes[0]), "a chunk twice");
    }

    @Test
    void theSourceKeepsItsDataChunksHashesUpToABound() {
        ChunkHashes k = new ChunkHashes();
        for (long i = 0; i < ChunkHashes.MAX_KEPT + 10L; i++) {
            k.add(2 * i, hash(i));
        }
        assertEquals(ChunkHashes.MAX_KEPT, k.kept());
        assertArrayEquals(hash(0), k.of(0));
        assertArrayEquals(hash(77), k.of(154));
        assertNull(k.of(155), "a hole is not kept: its hash is the zero chunk's");
        assertNull(k.of(2L * ChunkHashes.MAX_KEPT), "past the bound: hashed again when sent");
        ChunkHashes ordered = new ChunkHashes();
        ordered.add(5, hash(5));
        assertThrows(IllegalStateException.class, () -> ordered.add(5, hash(5)), "in increasing order only");
    }

    static byte[] hash(long i) {
        return ByteBuffer.allocate(32).putLong(i).putLong(24, ~i).array();
    }

    static byte[] sha256(byte[] b) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(b);
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        b[0] = 1;
        return b;
    }
}
