package io.loopcsi.transfer.service;

import java.util.function.LongSupplier;

/**
 * The most bytes per second a node sends for transfers, all of them together (StoragePool
 * spec.transfer.bandwidthPerNode). A sender sends a chunk, then {@link #reserve reserves} its bytes
 * and waits the time returned before its next chunk: the reservations of all senders follow one
 * another on one time line at the cap's rate, so over any span the bytes sent are at most the cap
 * times the span plus one chunk per sender (what each sent before its first wait). Time that
 * nobody used is not saved up: a sender idle for a minute does not then send a minute's worth at
 * once. Guava's RateLimiter works the same way (a permit's cost paid by the next), but only by
 * sleeping the caller's thread; the transfer service's stream must not block its thread, so it
 * schedules its next chunk after the wait instead.
 */
public final class BandwidthCap {

    private static final long SECOND = 1_000_000_000L;

    private final long bytesPerSecond;
    private final LongSupplier nanoTime;
    /** When the reservations made so far are used up (System.nanoTime's scale). */
    private long free;

    /** A cap of {@code bytesPerSecond} (> 0), on {@code nanoTime}'s clock. */
    public BandwidthCap(long bytesPerSecond, LongSupplier nanoTime) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("a bandwidth cap must be more than 0 bytes per second, not " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
        this.nanoTime = nanoTime;
        this.free = nanoTime.getAsLong();
    }

    /** No cap: every reservation is free. */
    public static BandwidthCap unlimited() {
        return new BandwidthCap(Long.MAX_VALUE, () -> 0L);
    }

    public boolean limited() {
        return bytesPerSecond != Long.MAX_VALUE;
    }

    /** Reserves {@code bytes} just sent; answers how long, in nanoseconds, the sender waits before it sends again (0: at once). */
    public synchronized long reserve(long bytes) {
        if (!limited() || bytes <= 0) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        if (free - now < 0) {
            free = now; // the line was idle: nothing saved up
        }
        free += (long) Math.ceil((double) bytes * SECOND / bytesPerSecond);
        return Math.max(0, free - now);
    }
}
