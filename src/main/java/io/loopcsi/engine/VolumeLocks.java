package io.loopcsi.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Serializes operations per volume or snapshot ID. A second call on an ID with a call in flight
 * is answered ABORTED (the CSI spec's "operation pending for volume"), except where waiting is
 * what makes the answer identical (creates of one name wait for the first to finish).
 */
public class VolumeLocks {

    /** A held lock; closing it releases it. */
    public interface Held extends AutoCloseable {
        @Override
        void close();
    }

    private final ConcurrentHashMap<String, ReentrantLock> locks = new ConcurrentHashMap<>();

    public Held tryAcquire(String id) {
        ReentrantLock lock = locks.computeIfAbsent(id, k -> new ReentrantLock());
        if (!lock.tryLock()) {
            throw new EngineException(EngineException.Kind.ABORTED,
                    "an operation on " + id + " is already in progress; retry when it has finished");
        }
        return lock::unlock;
    }

    public Held acquireWaiting(String id, long timeoutMillis) {
        ReentrantLock lock = locks.computeIfAbsent(id, k -> new ReentrantLock());
        try {
            if (!lock.tryLock(timeoutMillis, TimeUnit.MILLISECONDS)) {
                throw new EngineException(EngineException.Kind.ABORTED,
                        "an operation on " + id + " is still in progress after " + timeoutMillis + " ms; retry later");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EngineException(EngineException.Kind.ABORTED, "interrupted while waiting for " + id, e);
        }
        return lock::unlock;
    }
}
