package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** The destination's hand-off from the receiving thread to the writing one: order, bound, and a writer's failure. */
class WriteBehindTest {

    @Test
    void itemsAreConsumedInOrderAndFinishWaitsForTheLast() {
        List<Integer> seen = new CopyOnWriteArrayList<>();
        WriteBehind<Integer> w = new WriteBehind<>("t", 1, i -> {
            sleep(i % 3);
            seen.add(i);
        }, () -> {
        });
        for (int i = 0; i < 200; i++) {
            w.put(i);
        }
        w.finish();
        assertEquals(200, seen.size(), "every item consumed once finish returns");
        for (int i = 0; i < 200; i++) {
            assertEquals(i, seen.get(i));
        }
        w.finish(); // idempotent
    }

    @Test
    void atMostDepthItemsWaitBesidesTheOneBeingConsumed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch consuming = new CountDownLatch(1);
        WriteBehind<Integer> w = new WriteBehind<>("t", 1, i -> {
            consuming.countDown();
            await(release);
        }, () -> {
        });
        w.put(0);
        assertTrue(consuming.await(5, TimeUnit.SECONDS));
        w.put(1); // waits in the queue
        AtomicInteger put = new AtomicInteger();
        Thread third = new Thread(() -> {
            w.put(2);
            put.set(1);
        });
        third.start();
        third.join(300);
        assertTrue(third.isAlive(), "a third chunk is not taken while one is written and one waits");
        assertEquals(0, put.get());
        release.countDown();
        third.join(5000);
        assertEquals(1, put.get());
        w.finish();
    }

    @Test
    void aFailureDropsWhatFollowsRunsOnFailureOnceAndIsThrownByPutAndFinish() throws Exception {
        List<Integer> seen = new CopyOnWriteArrayList<>();
        AtomicInteger failures = new AtomicInteger();
        CountDownLatch failed = new CountDownLatch(1);
        TransferException refused = TransferException.invalid("chunk 3 refused");
        CountDownLatch fourQueued = new CountDownLatch(1);
        WriteBehind<Integer> w = new WriteBehind<>("t", 1, i -> {
            if (i == 3) {
                await(fourQueued); // 4 waits in the queue when 3 fails: it must be dropped
                throw refused;
            }
            seen.add(i);
        }, () -> {
            failures.incrementAndGet();
            failed.countDown();
        });
        for (int i = 0; i < 5; i++) {
            w.put(i);
        }
        fourQueued.countDown();
        assertTrue(failed.await(5, TimeUnit.SECONDS));
        assertSame(refused, assertThrows(TransferException.class, () -> w.put(5)));
        assertSame(refused, assertThrows(TransferException.class, w::finish));
        assertEquals(List.of(0, 1, 2), seen, "nothing after the refused item is consumed");
        assertEquals(1, failures.get());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
