package io.loopcsi.controller;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

import io.loopcsi.handoff.LoopTransferSpec;
import io.loopcsi.handoff.LoopVolume;

/**
 * Whether a LoopTransfer is over, so that deleting it frees what its source node keeps for it (the
 * point-in-time copy of a source volume, node.TransferSweeper). Pure: the caller reads the objects.
 *
 * <p>The order of the writes decides it: a CreateVolume writes (or renews) the LoopTransfer, then
 * the destination's LoopVolume intent, or the retried attempt of a failed one
 * ({@link TransferIntents#authorise}, VolumeIntents.createVolume). So a transfer with no
 * LoopVolume may be a call between its two writes: it is over only when its window has ended (a
 * retry renews the window before it writes). One whose LoopVolume is answered is over, unless it
 * was written within {@link #RENEWAL_GRACE}: the retry of a failed volume renews it just before it
 * writes the attempt the old answer no longer answers. One whose LoopVolume is not answered is a
 * transfer under way; one whose LoopVolume could not be read is kept.
 */
final class TransferEnd {

    /** Longer than the one write between a renewal and the intent it is for, on a loaded API server. */
    static final Duration RENEWAL_GRACE = Duration.ofMinutes(1);

    /** What is known of the destination volume's LoopVolume. */
    enum Destination {
        /** There is none. */
        ABSENT,
        /** The node has not answered its current spec: the transfer is under way, or about to be. */
        PENDING,
        /** The node answered its current spec (made, or failed). */
        ANSWERED,
        /** It could not be read. */
        UNKNOWN;

        static Destination of(LoopVolume v) {
            return v == null ? ABSENT : v.answered() ? ANSWERED : PENDING;
        }
    }

    private TransferEnd() {
    }

    /** Why the transfer is over; empty while it may still be read. */
    static Optional<String> over(LoopTransferSpec spec, Destination destination, Instant now) {
        if (spec == null) {
            return Optional.empty(); // not ours to judge (the CRD requires one)
        }
        return switch (destination) {
            case PENDING, UNKNOWN -> Optional.empty();
            case ANSWERED -> writtenBefore(spec, now.minus(RENEWAL_GRACE))
                    ? Optional.of("its destination volume is answered") : Optional.empty();
            case ABSENT -> ended(spec, now)
                    ? Optional.of("its destination volume is gone and its window ended at " + spec.getNotAfter()) : Optional.empty();
        };
    }

    /** True when the window's end has passed, or cannot be read (such a window authorises nothing on the source node either). */
    private static boolean ended(LoopTransferSpec spec, Instant now) {
        Instant notAfter = parse(spec.getNotAfter());
        return notAfter == null || !now.isBefore(notAfter);
    }

    /** True when the controller wrote the window before t: it starts {@link TransferIntents#SKEW} before its writing. */
    private static boolean writtenBefore(LoopTransferSpec spec, Instant t) {
        Instant notBefore = parse(spec.getNotBefore());
        return notBefore == null || notBefore.plus(TransferIntents.SKEW).isBefore(t);
    }

    private static Instant parse(String rfc3339) {
        try {
            return rfc3339 == null ? null : Instant.parse(rfc3339);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
