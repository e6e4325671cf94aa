package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A chunk read into the caller's array (the source's Pump reuses one) is the chunk read into arrays of its own. */
class ImageSourceReadTest {

    @TempDir
    Path dir;

    @Test
    void aChunkReadIntoTheCallersArrayIsTheSameChunk() throws Exception {
        int chunk = 1 << 20;
        long size = 4L * chunk;
        Path image = dir.resolve("img");
        List<Range> ranges = List.of(new Range(100, 4096), new Range(300_000, 200_000), new Range(chunk - 10, 20), new Range(2L * chunk, chunk));
        Random rnd = new Random(35);
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(size);
            for (Range r : ranges) {
                byte[] b = new byte[(int) r.length()];
                rnd.nextBytes(b);
                f.seek(r.offset());
                f.write(b);
            }
        }
        TransferPlan plan = new TransferPlan("t", "s", size, chunk, RangeList.of(size, ranges), DigestFormat.CRC_V2, "0".repeat(64));
        byte[] into = new byte[chunk];
        try (ImageSource s = ImageSource.open(image, plan, null)) {
            for (long i = 0; i < plan.chunks(); i++) {
                Chunk own = s.read(i);
                Chunk reused = s.read(i, into);
                assertEquals(own.segments().size(), reused.segments().size());
                for (int k = 0; k < own.segments().size(); k++) {
                    Segment a = own.segments().get(k);
                    Segment b = reused.segments().get(k);
                    assertEquals(a.offset(), b.offset());
                    assertArrayEquals(a.data(), b.data());
                    assertSame(into, b.array());
                }
                assertArrayEquals(own.hash(), reused.hash());
            }
            // a chunk whose data does not fit is read into arrays of its own
            Chunk big = s.read(2, new byte[chunk / 2]);
            assertNotSame(into, big.segments().get(0).array());
            assertArrayEquals(s.read(2).segments().get(0).data(), big.segments().get(0).data());
        }
    }
}
