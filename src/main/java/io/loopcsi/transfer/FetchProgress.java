package io.loopcsi.transfer;

import java.time.Clock;
import java.time.Instant;

import io.loopcsi.handoff.TransferProgress;

/**
 * A fetch's progress by position in the source's plan: the planned data bytes of the chunks
 * written so far, counted from the plan, so that a fetch resumed from a checkpoint starts where it
 * was and zero blocks the source dropped still count as done. {@link #due} says when it is worth
 * writing (ProgressPace); {@link #status} is what the LoopVolume's status.transfer shows.
 */
public final class FetchProgress {

    private final String sourceNode;
    private final Clock clock;
    private final ProgressPace pace;
    private final java.util.function.LongSupplier nanos;
    private final Instant startedAt;
    private TransferPlan plan;
    private long done;
    /** What was done before this process's first attempt (a checkpoint): not counted in the rate. */
    private long base = -1;

    public FetchProgress(String sourceNode, Clock clock, java.util.function.LongSupplier nanos, long intervalNanos, double step) {
        this.sourceNode = sourceNode;
        this.clock = clock;
        this.nanos = nanos;
        this.startedAt = clock.instant();
        this.pace = new ProgressPace(intervalNanos, step, nanos.getAsLong());
    }

    /** An attempt starts at chunk from of plan: what lies before counts as done. */
    public void planned(TransferPlan plan, long from) {
        this.plan = plan;
        this.done = bytes(plan, 0, Math.min(plan.size(), from * plan.chunkSize()));
        if (base < 0) {
            base = done;
        }
    }

    /** Chunk index is written; true when the progress is due to be written. */
    public boolean chunk(long index) {
        if (plan == null) {
            return false;
        }
        Range r = plan.chunk(index);
        done += bytes(plan, r.offset(), r.end());
        return pace.due(nanos.getAsLong(), done, total());
    }

    public long done() {
        return done;
    }

    public long total() {
        return plan == null ? 0 : plan.ranges().bytes();
    }

    /** status.transfer now: phase TransferProgress.TRANSFERRING, DONE or FAILED (with reason). */
    public TransferProgress status(String phase, String reason) {
        TransferProgress p = new TransferProgress();
        p.setPhase(phase);
        p.setSourceNode(sourceNode);
        p.setBytesDone(done);
        p.setBytesTotal(total());
        p.setBytesPerSecond(pace.rate(nanos.getAsLong(), done - Math.max(base, 0)));
        p.setStartedAt(startedAt.toString());
        p.setUpdatedAt(clock.instant().toString());
        p.setReason(reason);
        return p;
    }

    private static long bytes(TransferPlan plan, long from, long to) {
        long sum = 0;
        for (Range r : plan.ranges().within(from, to)) {
            sum += r.length();
        }
        return sum;
    }
}
