package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ProgressPaceTest {

    private static final long S = 1_000_000_000L;
    private static final long MIB = 1 << 20;

    @Test
    void aThousandChunksWithinTwoSecondsAreWrittenAtMostEveryFivePercent() {
        ProgressPace pace = new ProgressPace(2 * S, 0.05, 0);
        long total = 1000 * MIB;
        int writes = 0;
        for (int i = 1; i <= 1000; i++) {
            if (pace.due(i * 1_000_000L, i * MIB, total)) { // 1 ms a chunk: 1 s in all
                writes++;
            }
        }
        // the first chunk, every 50th (5%), the last one (which is also a 5% step)
        assertEquals(1 + 20, writes);
    }

    @Test
    void aSlowFetchIsWrittenEveryIntervalNotPerChunk() {
        ProgressPace pace = new ProgressPace(2 * S, 0.05, 0);
        long total = 100_000 * MIB;
        int writes = 0;
        for (int i = 1; i <= 100; i++) { // 100 chunks of 1 MiB, one every 100 ms: 10 s, 0.1% of the total
            if (pace.due(i * 100_000_000L, i * MIB, total)) {
                writes++;
            }
        }
        assertEquals(1 + 4, writes, "the first, then at 2.1 s, 4.1 s, 6.1 s, 8.1 s");
    }

    @Test
    void theLastByteIsAlwaysWritten() {
        ProgressPace pace = new ProgressPace(2 * S, 0.5, 0);
        assertTrue(pace.due(1, MIB, 100 * MIB));
        assertFalse(pace.due(2, 2 * MIB, 100 * MIB));
        assertTrue(pace.due(3, 100 * MIB, 100 * MIB));
        assertFalse(pace.due(4, 100 * MIB, 100 * MIB), "once");
    }

    @Test
    void rateIsBytesPerSecondSinceTheStart() {
        ProgressPace pace = new ProgressPace(2 * S, 0.05, 10 * S);
        assertEquals(50 * MIB, pace.rate(12 * S, 100 * MIB));
        assertEquals(0, pace.rate(10 * S, 100));
    }

    @Test
    void badBoundsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ProgressPace(0, 0.05, 0));
        assertThrows(IllegalArgumentException.class, () -> new ProgressPace(S, 0, 0));
    }
}
