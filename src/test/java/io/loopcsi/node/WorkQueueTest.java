package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

/**
 * Closing the queue (the node stops) interrupts the runs under way and waits for them to end, so
 * that what an interrupted run still does on its way out is done before the process exits: a
 * fetch's checkpoint (TransferFetch: the image synced and the progress recorded), without which
 * the restarted node fetched again from chunk 0.
 */
class WorkQueueTest {

    @Test
    void closeWaitsForAnInterruptedRunToFinishItsWayOut() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean checkpointed = new AtomicBoolean();
        WorkQueue q = new WorkQueue("test", 2, key -> {
            running.countDown();
            try {
                Thread.sleep(60_000); // a fetch under way
            } catch (InterruptedException e) {
                interrupted.set(true);
                // the way out, with the interrupt cleared: a checkpoint takes a while (fsync of up to 64 MiB)
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                checkpointed.set(true);
            }
            return Optional.<Duration>empty();
        });
        q.add("v/fetching");
        assertTrue(running.await(10, TimeUnit.SECONDS));

        long start = System.nanoTime();
        q.close();

        assertTrue(interrupted.get(), "the run was interrupted");
        assertTrue(checkpointed.get(), "close returned only after the interrupted run finished its way out");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "and not later than it needed");
    }
}
