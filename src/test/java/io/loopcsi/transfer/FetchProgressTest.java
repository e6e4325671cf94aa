package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.loopcsi.handoff.TransferProgress;

class FetchProgressTest {

    private static final long MIB = 1 << 20;

    /** 8 chunks of 1 MiB; data in chunks 0-1 and half of chunk 6: 2.5 MiB planned. */
    private static TransferPlan plan() {
        return new TransferPlan("pvc-1", "snap-1", 8 * MIB, (int) MIB,
                RangeList.of(8 * MIB, List.of(new Range(0, 2 * MIB), new Range(6 * MIB, MIB / 2))), DigestFormat.CRC_V2, "0".repeat(64));
    }

    @Test
    void progressIsThePlannedDataOfTheChunksWrittenAndAResumedFetchStartsWhereItWas() {
        AtomicLong now = new AtomicLong();
        FetchProgress p = new FetchProgress("node-a", Clock.fixed(Instant.parse("2026-12-06T00:00:00Z"), ZoneOffset.UTC), now::get,
                2_000_000_000L, 0.05);
        p.planned(plan(), 0);
        assertEquals(2 * MIB + MIB / 2, p.total());
        now.set(1_000_000_000L);
        assertTrue(p.chunk(0), "the first chunk is written");
        assertEquals(MIB, p.done());
        now.set(1_100_000_000L);
        assertTrue(p.chunk(1), "40% more: a step");
        // cut, resumed at chunk 2 (the checkpoint): what lay before counts as done
        p.planned(plan(), 2);
        assertEquals(2 * MIB, p.done());
        now.set(1_200_000_000L);
        assertFalse(p.chunk(2), "a hole: nothing new, 100 ms later");
        for (long i = 3; i < 6; i++) {
            p.chunk(i);
        }
        assertTrue(p.chunk(6), "the last data");
        assertEquals(p.total(), p.done());
        p.chunk(7);
        TransferProgress s = p.status(TransferProgress.DONE, null);
        assertEquals("Done", s.getPhase());
        assertEquals("node-a", s.getSourceNode());
        assertEquals(2 * MIB + MIB / 2, s.getBytesDone());
        assertEquals(2 * MIB + MIB / 2, s.getBytesTotal());
        assertEquals((long) ((2 * MIB + MIB / 2) / 1.2), s.getBytesPerSecond(), 1);
        assertEquals("2026-12-06T00:00:00Z", s.getStartedAt());
    }
}
