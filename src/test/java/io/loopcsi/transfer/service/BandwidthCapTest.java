package io.loopcsi.transfer.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/** The cap's arithmetic on a clock the test moves. */
class BandwidthCapTest {

    static final long S = 1_000_000_000L;
    static final long MIB = 1 << 20;

    final AtomicLong now = new AtomicLong(5 * S);
    final BandwidthCap cap = new BandwidthCap(4 * MIB, now::get);

    @Test
    void aSenderWaitsWhatItsBytesTakeAtTheCap() {
        assertEquals(S / 4, cap.reserve(MIB), "1 MiB at 4 MiB/s: a quarter second before the next");
        now.addAndGet(S / 4);
        assertEquals(S / 2, cap.reserve(2 * MIB));
        assertEquals(0, cap.reserve(0), "nothing sent, nothing to wait");
    }

    @Test
    void sendersTogetherStayUnderTheCap() {
        // three streams, each sending 1 MiB whenever its wait is over: 10 s of them
        long[] due = new long[3];
        long sent = 0;
        long end = now.get() + 10 * S;
        while (true) {
            int i = due[0] <= due[1] && due[0] <= due[2] ? 0 : due[1] <= due[2] ? 1 : 2;
            long t = Math.max(due[i], now.get());
            if (t >= end) {
                break;
            }
            now.set(t);
            sent += MIB;
            due[i] = t + cap.reserve(MIB);
        }
        assertTrue(sent <= 40 * MIB + 3 * MIB, sent + " bytes in 10 s at 4 MiB/s (one chunk ahead per stream allowed)");
        assertTrue(sent >= 40 * MIB - MIB, "the cap is reached, not undershot: " + sent);
    }

    @Test
    void idleTimeIsNotSavedUp() {
        cap.reserve(MIB);
        now.addAndGet(60 * S);
        assertEquals(S / 4, cap.reserve(MIB), "after a minute idle, the next chunk is paced as the first");
    }

    @Test
    void noCapAndABadCap() {
        BandwidthCap none = BandwidthCap.unlimited();
        assertEquals(0, none.reserve(1L << 40));
        assertThrows(IllegalArgumentException.class, () -> new BandwidthCap(0, now::get));
    }
}
