package io.loopcsi.transfer;

import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The destination's bound on the fetches it runs at once (the source's is in TransferService:
 * RESOURCE_EXHAUSTED over the same limit). A fetch asks {@link #admit} before it starts: it runs
 * when fewer than {@code limit} run and no earlier one waits; otherwise it takes its place in a
 * queue, first come first served, and asks again later (the caller re-asks every second or so,
 * without holding a thread: a waiting fetch must not hold one of the node's few work threads).
 * The queue is bounded: past {@code maxQueued} waiting, a fetch is refused ({@link Admission#FULL}).
 * A waiting fetch that stops asking for {@code forgetAfterNanos} (its volume deleted, the process
 * answering it gone) leaves the queue, so it never blocks the ones behind it.
 */
public final class FetchSlots {

    public enum Admission {
        RUN, QUEUED, FULL
    }

    /** The answer to one ask: what happens, and for a queued fetch its place (1 = next) and the fetches running. */
    public record Ticket(Admission admission, int position, int running, int limit) {

        /** For status.transfer and the log, of a queued fetch. */
        public String describe() {
            return switch (admission) {
                case RUN -> "running";
                case QUEUED -> "waiting for a fetch slot: " + running + " of at most " + limit + " fetches run on this node, "
                        + (position == 1 ? "this one is next" : (position - 1) + " wait before this one");
                case FULL -> running + " fetches run on this node (at most " + limit + ") and " + position + " wait, the most that may";
            };
        }
    }

    private final int limit;
    private final int maxQueued;
    private final long forgetAfterNanos;
    private final LongSupplier nanos;
    private final Set<String> running = new HashSet<>();
    /** Waiting transfer IDs in arrival order, each with when it last asked. */
    private final LinkedHashMap<String, Long> waiting = new LinkedHashMap<>();

    public FetchSlots(int limit, int maxQueued, long forgetAfterNanos, LongSupplier nanos) {
        if (limit < 1 || maxQueued < 0) {
            throw new IllegalArgumentException("fetch slots: a limit of at least 1 and a queue of at least 0, not " + limit + " and " + maxQueued);
        }
        this.limit = limit;
        this.maxQueued = maxQueued;
        this.forgetAfterNanos = forgetAfterNanos;
        this.nanos = nanos;
    }

    /** Whether transferId may start now; RUN holds a slot until {@link #release}. Asking again while running answers RUN. */
    public synchronized Ticket admit(String transferId) {
        long now = nanos.getAsLong();
        if (running.contains(transferId)) {
            return new Ticket(Admission.RUN, 0, running.size(), limit);
        }
        for (Iterator<Map.Entry<String, Long>> it = waiting.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, Long> e = it.next();
            if (!e.getKey().equals(transferId) && now - e.getValue() > forgetAfterNanos) {
                it.remove(); // stopped asking: given up
            }
        }
        int position = 1;
        for (String w : waiting.keySet()) {
            if (w.equals(transferId)) {
                break;
            }
            position++;
        }
        boolean queued = waiting.containsKey(transferId);
        if (running.size() < limit && position == 1) {
            waiting.remove(transferId);
            running.add(transferId);
            return new Ticket(Admission.RUN, 0, running.size(), limit);
        }
        if (!queued && waiting.size() >= maxQueued) {
            return new Ticket(Admission.FULL, waiting.size(), running.size(), limit);
        }
        waiting.put(transferId, now);
        return new Ticket(Admission.QUEUED, position, running.size(), limit);
    }

    /** The fetch ended (or never started after RUN): its slot is free. A queued one that gives up is released too. */
    public synchronized void release(String transferId) {
        running.remove(transferId);
        waiting.remove(transferId);
    }

    public synchronized int running() {
        return running.size();
    }

    public synchronized int waiting() {
        return waiting.size();
    }
}
