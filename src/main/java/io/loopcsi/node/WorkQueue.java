package io.loopcsi.node;

import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.jboss.logging.Logger;

/**
 * Keys to process, at most one run per key at a time (a key added while it runs runs again
 * after), on a few worker threads. The handler returns when to look at the key again, if ever.
 * Made at role start, never at class initialization (it holds threads).
 */
final class WorkQueue implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(WorkQueue.class);
    /** How long {@link #close} waits for interrupted runs: well inside kubelet's default grace period of 30 s. */
    static final Duration FINISH = Duration.ofSeconds(20);

    private final Function<String, Optional<Duration>> handler;
    private final ExecutorService workers;
    private final ScheduledExecutorService timer;
    private final Set<String> pending = new HashSet<>();
    private final Set<String> running = new HashSet<>();
    private final Set<String> again = new HashSet<>();

    WorkQueue(String name, int threads, Function<String, Optional<Duration>> handler) {
        this.handler = handler;
        this.workers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name + "-timer");
            t.setDaemon(true);
            return t;
        });
    }

    void add(String key) {
        synchronized (this) {
            if (running.contains(key)) {
                again.add(key);
                return;
            }
            if (!pending.add(key)) {
                return;
            }
        }
        workers.execute(() -> run(key));
    }

    void addAfter(String key, Duration delay) {
        timer.schedule(() -> add(key), delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void run(String key) {
        synchronized (this) {
            pending.remove(key);
            running.add(key);
        }
        Optional<Duration> next = Optional.empty();
        try {
            next = handler.apply(key);
        } catch (RuntimeException e) {
            LOG.warnf(e, "%s failed; trying again in 5s", key);
            next = Optional.of(Duration.ofSeconds(5));
        } finally {
            boolean rerun;
            synchronized (this) {
                running.remove(key);
                rerun = again.remove(key);
            }
            if (rerun) {
                add(key);
            }
        }
        next.ifPresent(d -> addAfter(key, d));
    }

    /**
     * Interrupts the runs under way and waits, up to {@link #FINISH}, for them to end. A run that
     * is interrupted still finishes what must outlive the process: a fetch from another node takes
     * its checkpoint (the image synced, the progress recorded) so that the node goes on from there
     * when it is back. Without the wait the process exited (its threads are daemons) while that
     * checkpoint was being written, and the fetch started over from chunk 0 (TransferFaultsKubeIT,
     * the destination's restart).
     */
    @Override
    public void close() {
        timer.shutdownNow();
        workers.shutdownNow();
        try {
            if (!workers.awaitTermination(FINISH.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warnf("work still under way %d s after it was interrupted; stopping without it", FINISH.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
