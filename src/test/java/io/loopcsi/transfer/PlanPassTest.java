package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The source's plan pass hashes chunks on several threads through a small buffer: its digest and
 * kept hashes must be those of the chunks read whole and hashed one after another in order
 * (ContentDigest's definition, which older nodes compute).
 */
class PlanPassTest {

    @TempDir
    Path dir;

    @Test
    void theParallelPassGivesTheDigestAndHashesOfTheChunksReadInOrder() throws Exception {
        int chunk = 4 << 20; // larger than a plan thread's buffer: a range is read in several pieces
        long size = 9L * chunk + 12345; // a short last chunk
        Path image = dir.resolve("img");
        Random rnd = new Random(35);
        List<Range> ranges = List.of(new Range(100, 3 << 20), new Range(chunk - 10, 20), // across a chunk's end
                new Range(2L * chunk, chunk), new Range(5L * chunk + 7, (1 << 20) + 3), new Range(5L * chunk + (2 << 20), 2 * chunk),
                new Range(size - 1000, 1000));
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(size);
            for (Range r : ranges) {
                byte[] b = new byte[(int) r.length()];
                rnd.nextBytes(b);
                f.seek(r.offset());
                f.write(b);
            }
        }
        RangeList list = RangeList.of(size, ranges);
        assertTrue(ImageSource.planThreads() >= 1);
        try (ImageSource planned = ImageSource.plan("t", "vol-x", image, list, chunk, DigestFormat.CRC_V2)) {
            TransferPlan p = planned.plan();
            ContentDigest expected = new ContentDigest(size, chunk, DigestFormat.CRC_V2);
            try (ImageSource unhashed = ImageSource.open(image, new TransferPlan("t", "vol-x", size, chunk, list, p.format(), p.digest()), null)) {
                for (long i = 0; i < p.chunks(); i++) {
                    Chunk c = unhashed.read(i); // no kept hashes: hashed from the whole chunk read
                    expected.add(i, c.hash());
                    if (c.segments().isEmpty()) {
                        assertNull(planned.hashes().of(i), "a hole keeps no hash: chunk " + i);
                    } else {
                        assertArrayEquals(c.hash(), planned.hashes().of(i), "chunk " + i);
                    }
                }
            }
            assertEquals(expected.hex(), p.digest());
        }
    }
}
