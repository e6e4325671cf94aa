package io.loopcsi.transfer;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Hands items, in order, to one thread of its own that applies a consumer to each: the caller
 * (the destination's receiving thread) goes on receiving the next chunk while this thread checks
 * and writes the previous one. Issue 35's measurements showed the destination receiving, hashing
 * and writing on one thread, so gRPC asked for the next chunk only after the last was written and
 * the source waited meanwhile.
 *
 * <p>Bounded: at most {@code depth} items wait, plus the one being consumed; {@link #put} blocks
 * until there is room. Ordered: one thread, in the order put. A consumer that throws ends the
 * consuming: the items after it are dropped (never consumed), {@code onFailure} runs once (the
 * caller cancels its stream there), and the failure is thrown by the next {@link #put} and by
 * {@link #finish}. {@link #finish} waits until every item put before it is consumed (or dropped
 * after a failure), so what the caller does next (record the progress) sees all of it.
 */
public final class WriteBehind<T> {

    private static final Object END = new Object();

    private final ArrayDeque<Object> queue = new ArrayDeque<>();
    private final int depth;
    private final Consumer<T> consumer;
    private final Runnable onFailure;
    private final Thread thread;
    private volatile Throwable failure;
    /** Guarded by queue. */
    private boolean ended;

    public WriteBehind(String name, int depth, Consumer<T> consumer, Runnable onFailure) {
        if (depth < 1) {
            throw new IllegalArgumentException("depth " + depth);
        }
        this.depth = depth;
        this.consumer = consumer;
        this.onFailure = onFailure;
        this.thread = new Thread(this::consume, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Queues an item, blocking while {@code depth} wait; throws the consumer's failure if it failed already. */
    public void put(T item) {
        synchronized (queue) {
            if (ended) {
                throw new IllegalStateException("put after finish");
            }
            while (failure == null && queue.size() >= depth) {
                try {
                    queue.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while handing a chunk to the writer", e);
                }
            }
            rethrow();
            queue.addLast(item);
            queue.notifyAll();
        }
    }

    /**
     * No more items: waits until those put are consumed (or dropped after a failure), then throws
     * the consumer's failure if there was one. Idempotent.
     */
    public void finish() {
        boolean first;
        synchronized (queue) {
            first = !ended;
            if (first) {
                ended = true;
                queue.addLast(END);
                queue.notifyAll();
            }
        }
        boolean interrupted = false;
        while (first && thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true; // the writer ends by itself after at most depth + 1 items: wait for it
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        rethrow();
    }

    /** The consumer's failure, or null. */
    public Throwable failure() {
        return failure;
    }

    private void rethrow() {
        Throwable f = failure;
        if (f instanceof RuntimeException r) {
            throw r;
        }
        if (f instanceof Error e) {
            throw e;
        }
        if (f != null) {
            throw new IllegalStateException(f);
        }
    }

    @SuppressWarnings("unchecked")
    private void consume() {
        while (true) {
            Object o;
            synchronized (queue) {
                while (queue.isEmpty()) {
                    try {
                        queue.wait();
                    } catch (InterruptedException e) {
                        // nobody interrupts this thread but the JVM's end; END is what stops it
                    }
                }
                o = queue.removeFirst();
                queue.notifyAll();
            }
            if (o == END) {
                return;
            }
            if (failure != null) {
                continue; // dropped: nothing after a failed item is consumed
            }
            try {
                consumer.accept((T) o);
            } catch (Throwable t) {
                synchronized (queue) {
                    failure = t;
                    queue.notifyAll(); // a put waiting for room throws it now
                }
                onFailure.run();
            }
        }
    }
}
