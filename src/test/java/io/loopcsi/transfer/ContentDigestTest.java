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
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The digest's definition in each format, pinned against an independent computation of the
 * logical bytes (SHA-256; CRC-32 and CRC-32C, with the CRC catalogue's check values): what both
 * ends, and nodes of other releases, must agree on.
 */
class ContentDigestTest {

    static final int CHUNK = 64 * 1024;

    @Test
    void aV1ChunkHashIsTheSha256OfItsLogicalBytesHolesReadAsZeros() throws Exception {
        theChunkHashIsOfTheLogicalBytes(DigestFormat.SHA256_V1, ContentDigestTest::sha256);
    }

    @Test
    void aV2ChunkHashIsTheCrc32AndCrc32cOfItsLogicalBytesHolesReadAsZeros() throws Exception {
        theChunkHashIsOfTheLogicalBytes(DigestFormat.CRC_V2, ContentDigestTest::crcs);
        // the catalogue's check values (CRC-32/ISO-HDLC cbf43926, CRC-32/ISCSI e3069283) of "123456789"
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        assertEquals("cbf43926e3069283", HexFormat.of().formatHex(ContentDigest.chunkHash(DigestFormat.CRC_V2, 0, check.length,
                List.of(new Segment(0, check)))));
        assertEquals(8, DigestFormat.CRC_V2.hashBytes());
    }

    private void theChunkHashIsOfTheLogicalBytes(DigestFormat f, Hash reference) throws Exception {
        byte[] a = random(3000, 1);
        byte[] b = random(10, 2);
        long start = 5L * CHUNK;
        byte[] logical = new byte[CHUNK];
        System.arraycopy(a, 0, logical, 100, a.length);
        System.arraycopy(b, 0, logical, CHUNK - b.length, b.length); // a range ending at the chunk's end
        byte[] h = ContentDigest.chunkHash(f, start, CHUNK, List.of(new Segment(start + 100, a), new Segment(start + CHUNK - b.length, b)));
        assertArrayEquals(reference.of(logical), h);

        assertArrayEquals(reference.of(new byte[CHUNK]), ContentDigest.chunkHash(f, 0, CHUNK, List.of()), "a hole");
        assertArrayEquals(reference.of(new byte[1234]), ContentDigest.chunkHash(f, 9L * CHUNK, 1234, List.of()), "a short last chunk of holes");
        assertArrayEquals(reference.of(new byte[CHUNK]), ContentDigest.chunkHash(f, 0, CHUNK, List.of(new Segment(0, new byte[CHUNK]))),
                "written zeros hash as a hole: the same content, other allocation");
        DigestFormat.ChunkHasher fromBuffer = f.hasher();
        ByteBuffer direct = ByteBuffer.allocateDirect(CHUNK).put(logical).flip();
        fromBuffer.update(direct);
        assertArrayEquals(reference.of(logical), fromBuffer.finish(), "a direct buffer hashes as its bytes");
        assertEquals(0, direct.remaining(), "the buffer is consumed");
    }

    @ParameterizedTest
    @EnumSource(DigestFormat.class)
    void aFlippedByteChangesTheChunkHash(DigestFormat f) {
        byte[] a = random(CHUNK, 3);
        byte[] h = ContentDigest.chunkHash(f, 0, CHUNK, List.of(new Segment(0, a)));
        for (int at : new int[] { 0, 1, CHUNK / 2, CHUNK - 1 }) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] flipped = a.clone();
                flipped[at] ^= (byte) (1 << bit);
                assertFalse(Arrays.equals(h, ContentDigest.chunkHash(f, 0, CHUNK, List.of(new Segment(0, flipped)))), "byte " + at + " bit " + bit);
            }
        }
        byte[] swapped = a.clone(); // two bytes swapped: a sum of the bytes would not see it
        swapped[10] = a[11];
        swapped[11] = a[10];
        if (a[10] != a[11]) {
            assertFalse(Arrays.equals(h, ContentDigest.chunkHash(f, 0, CHUNK, List.of(new Segment(0, swapped)))), "two bytes swapped");
        }
        assertFalse(Arrays.equals(h, ContentDigest.chunkHash(f, CHUNK, CHUNK, List.of(new Segment(CHUNK + 1, Arrays.copyOf(a, CHUNK - 1))))),
                "the same bytes one byte further");
    }

    @ParameterizedTest
    @EnumSource(DigestFormat.class)
    void theDigestIsSha256OfTheHeaderAndTheChunkHashesInOrder(DigestFormat f) throws Exception {
        long size = 2L * CHUNK + 100; // the last chunk is short
        byte[][] hashes = { random(f.hashBytes(), 4), random(f.hashBytes(), 5), random(f.hashBytes(), 6) };
        ContentDigest d = new ContentDigest(size, CHUNK, f);
        for (int i = 0; i < 3; i++) {
            d.add(i, hashes[i]);
        }
        MessageDigest m = MessageDigest.getInstance("SHA-256");
        m.update(f.wireName().getBytes(StandardCharsets.US_ASCII));
        m.update(ByteBuffer.allocate(12).putLong(size).putInt(CHUNK).array());
        for (byte[] h : hashes) {
            m.update(h);
        }
        assertEquals(HexFormat.of().formatHex(m.digest()), d.hex());

        ContentDigest early = new ContentDigest(size, CHUNK, f);
        early.add(0, hashes[0]);
        assertThrows(IllegalStateException.class, early::hex, "not every chunk hashed");
        assertThrows(IllegalStateException.class, () -> early.add(2, hashes[2]), "a chunk skipped");
        assertThrows(IllegalStateException.class, () -> early.add(0, hashes[0]), "a chunk twice");
        assertThrows(IllegalStateException.class, () -> early.add(1, new byte[f.hashBytes() + 1]), "a hash of another length");
    }

    @Test
    void v1IsTheFormatOfEarlierReleasesAndTheSourceChoosesTheFirstOfferedItKnows() {
        assertEquals("loopcsi-content-sha256-v1", DigestFormat.SHA256_V1.wireName(), "what releases before v2 hash with: never renamed");
        assertEquals(DigestFormat.SHA256_V1, DigestFormat.choose(List.of()), "a destination of an earlier release offers nothing");
        assertEquals(DigestFormat.CRC_V2, DigestFormat.choose(List.of("loopcsi-content-blake3-v9", DigestFormat.CRC_V2.wireName(),
                DigestFormat.SHA256_V1.wireName())), "an unknown name is passed over");
        assertEquals(DigestFormat.SHA256_V1, DigestFormat.choose(List.of(DigestFormat.SHA256_V1.wireName(), DigestFormat.CRC_V2.wireName())),
                "the destination's order, not the source's");
        assertEquals(DigestFormat.CRC_V2, DigestFormat.OFFERED.get(0), "this release asks for v2 first");
    }

    @Test
    void theSourceKeepsItsDataChunksHashesUpToABound() {
        ChunkHashes k = new ChunkHashes(DigestFormat.SHA256_V1);
        for (long i = 0; i < ChunkHashes.MAX_KEPT + 10L; i++) {
            k.add(2 * i, hash(i));
        }
        assertEquals(ChunkHashes.MAX_KEPT, k.kept());
        assertArrayEquals(hash(0), k.of(0));
        assertArrayEquals(hash(77), k.of(154));
        assertNull(k.of(155), "a hole is not kept: its hash is the zero chunk's");
        assertNull(k.of(2L * ChunkHashes.MAX_KEPT), "past the bound: hashed again when sent");
        ChunkHashes ordered = new ChunkHashes(DigestFormat.SHA256_V1);
        ordered.add(5, hash(5));
        assertThrows(IllegalStateException.class, () -> ordered.add(5, hash(5)), "in increasing order only");
    }

    static byte[] hash(long i) {
        return ByteBuffer.allocate(32).putLong(i).putLong(24, ~i).array();
    }

    interface Hash {
        byte[] of(byte[] b) throws Exception;
    }

    static byte[] sha256(byte[] b) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(b);
    }

    static byte[] crcs(byte[] b) {
        CRC32 ieee = new CRC32();
        ieee.update(b);
        CRC32C castagnoli = new CRC32C();
        castagnoli.update(b);
        return ByteBuffer.allocate(8).putInt((int) ieee.getValue()).putInt((int) castagnoli.getValue()).array();
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        b[0] = 1;
        return b;
    }
}
