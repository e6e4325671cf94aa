package io.loopcsi.transfer.service;

import java.util.ArrayDeque;

import io.loopcsi.transfer.Chunk;

/**
 * The arrays one transfer's chunk messages are received into ({@link Messages#chunks}), each used
 * again once its chunk is written. Why (issue 35): the native executable, the default runtime,
 * gives every array of 1 MiB in a chunk of memory of its own, mapped for it and unmapped at the
 * next collection, so a fresh array per chunk cost a page fault per 4 KiB and two zeroings (the
 * kernel's and the allocator's). A profile of the native evacuation bench had the destination's
 * gRPC threads spending most of their CPU there; the JVM's young generation hides the cost.
 *
 * <p>Contract: an array goes back ({@link #give}) only when nothing refers to it any more: the
 * destination gives a chunk's array once its writer has written the chunk; a chunk refused or
 * dropped is not given back and is left to the collector. One instance per transfer attempt, so
 * nothing is kept once it ends; at most {@link #KEPT} free arrays are held meanwhile, which is what
 * one attempt has in flight (gRPC parsing one, one waiting in its stream, the writer's hand-off
 * and the one being written).
 */
final class ChunkArrays {

    static final int KEPT = 4;
    /** New arrays are made in steps of this, so that messages of one chunk size, whose framing varies by a few bytes, fit one array. */
    static final int GRAIN = 64 * 1024;

    private final ArrayDeque<byte[]> free = new ArrayDeque<>();
    private int made;
    private int largest;

    /**
     * An array of at least size bytes. Below {@link #GRAIN}, a new one. Else a free one if it is that long, else a new one as long as the
     * longest needed so far (rounded up to {@link #GRAIN}), so that any later message fits it. A
     * free array shorter than this message is dropped: those made later are longer.
     */
    byte[] take(int size) {
        if (size < GRAIN) {
            return new byte[size]; // a chunk of holes or a little data: cheap to allocate, and its chunk may hold no segment to give back
        }
        int length;
        synchronized (free) {
            for (byte[] a = free.pollFirst(); a != null; a = free.pollFirst()) {
                if (a.length >= size) {
                    return a;
                }
            }
            made++;
            largest = Math.max(largest, (int) Math.min(Integer.MAX_VALUE - 8, ((long) size + GRAIN - 1) / GRAIN * GRAIN));
            length = Math.max(largest, size);
        }
        return new byte[length];
    }

    /** The array the chunk's segments are slices of, for use again: only once the chunk is written. */
    void give(Chunk written) {
        if (written.segments().isEmpty()) {
            return;
        }
        byte[] a = written.segments().get(0).array();
        if (a.length < GRAIN) {
            return;
        }
        synchronized (free) {
            if (free.size() < KEPT) {
                free.addLast(a);
            }
        }
    }

    /** How many arrays of {@link #GRAIN} or more {@link #take} made rather than reused (for tests). */
    int made() {
        synchronized (free) {
            return made;
        }
    }
}
