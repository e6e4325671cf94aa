package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.loopcsi.transfer.FetchSlots.Admission;

/** The destination's bound on fetches at once: a queue, first come first served, bounded, forgetting who stops asking. */
class FetchSlotsTest {

    final AtomicLong now = new AtomicLong();
    final FetchSlots slots = new FetchSlots(2, 2, TimeUnit.SECONDS.toNanos(30), now::get);

    @Test
    void pastTheLimitFetchesWaitInArrivalOrderWithTheirPlaceAndPastTheQueueAreRefused() {
        assertEquals(Admission.RUN, slots.admit("a").admission());
        assertEquals(Admission.RUN, slots.admit("b").admission());
        FetchSlots.Ticket c = slots.admit("c");
        assertEquals(Admission.QUEUED, c.admission());
        assertEquals(1, c.position());
        assertEquals("waiting for a fetch slot: 2 of at most 2 fetches run on this node, this one is next", c.describe());
        FetchSlots.Ticket d = slots.admit("d");
        assertEquals(2, d.position());
        assertTrue(d.describe().endsWith("1 wait before this one"), d.describe());
        FetchSlots.Ticket e = slots.admit("e");
        assertEquals(Admission.FULL, e.admission(), "the queue holds 2");
        assertTrue(e.describe().contains("2 wait, the most that may"), e.describe());

        assertEquals(Admission.RUN, slots.admit("a").admission(), "asking again while running");
        slots.release("a");
        assertEquals(Admission.QUEUED, slots.admit("d").admission(), "d asks first, but c came first");
        assertEquals(2, slots.admit("d").position());
        assertEquals(Admission.RUN, slots.admit("c").admission());
        assertEquals(1, slots.admit("d").position());
        assertEquals(2, slots.running());
        slots.release("b");
        assertEquals(Admission.RUN, slots.admit("d").admission());
        assertEquals(Admission.QUEUED, slots.admit("e").admission(), "room in the queue again");
    }

    @Test
    void aWaitingFetchThatStopsAskingLeavesTheQueue() {
        slots.admit("a");
        slots.admit("b");
        slots.admit("gone"); // its volume deleted: it never asks again
        now.addAndGet(TimeUnit.SECONDS.toNanos(10));
        assertEquals(2, slots.admit("c").position());
        slots.release("a");
        now.addAndGet(TimeUnit.SECONDS.toNanos(31));
        assertEquals(Admission.RUN, slots.admit("c").admission(), "not blocked behind one that gave up");
        assertEquals(0, slots.waiting());
    }

    @Test
    void neverMoreRunAtOnceThanTheLimit() throws Exception {
        FetchSlots real = new FetchSlots(2, 64, TimeUnit.SECONDS.toNanos(30), System::nanoTime);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String id = "t" + i;
            fs.add(pool.submit(() -> {
                go.await();
                while (real.admit(id).admission() != Admission.RUN) {
                    Thread.sleep(2); // the handler's ask again
                }
                try {
                    most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    Thread.sleep(20);
                    inside.decrementAndGet();
                } finally {
                    real.release(id);
                }
                done.incrementAndGet();
                return null;
            }));
        }
        go.countDown();
        for (var f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertEquals(8, done.get(), "every fetch ran in the end");
        assertTrue(most.get() <= 2, "never more than two at once: " + most.get());
    }

    @Test
    void aLimitBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new FetchSlots(0, 1, 1, now::get));
    }
}
