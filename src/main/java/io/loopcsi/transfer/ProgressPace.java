package io.loopcsi.transfer;

/**
 * When a fetch's progress is worth writing to the API server: the first chunk, then at most every
 * {@code intervalNanos} unless another {@code stepFraction} of the total is done, never per chunk (a
 * 10 GiB image is 10240 chunks of 1 MiB; a status write per chunk would load the API server for
 * nothing a person can read). Also the rate since the start, for people.
 */
public final class ProgressPace {

    private final long intervalNanos;
    private final double stepFraction;
    private final long startNanos;
    private long lastNanos;
    private long lastDone = -1;

    public ProgressPace(long intervalNanos, double stepFraction, long startNanos) {
        if (intervalNanos <= 0 || stepFraction <= 0 || stepFraction > 1) {
            throw new IllegalArgumentException("interval " + intervalNanos + " ns, step " + stepFraction);
        }
        this.intervalNanos = intervalNanos;
        this.stepFraction = stepFraction;
        this.startNanos = startNanos;
        this.lastNanos = startNanos;
    }

    /**
     * Whether {@code done} of {@code total} bytes at {@code nowNanos} is to be written; when it is,
     * it becomes the last one written. The first call is due, and so is the last byte.
     */
    public boolean due(long nowNanos, long done, long total) {
        boolean first = lastDone < 0;
        boolean step = total > 0 && done - Math.max(lastDone, 0) >= (long) Math.ceil(total * stepFraction);
        boolean end = total > 0 && done >= total && lastDone < total;
        if (first || end || nowNanos - lastNanos >= intervalNanos || step) {
            lastNanos = nowNanos;
            lastDone = done;
            return true;
        }
        return false;
    }

    /** Bytes per second from the start to now (0 before a millisecond passed). */
    public long rate(long nowNanos, long done) {
        long elapsed = nowNanos - startNanos;
        return elapsed < 1_000_000 ? 0 : (long) (done * 1e9 / elapsed);
    }
}
