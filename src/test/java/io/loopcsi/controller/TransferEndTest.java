package io.loopcsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.loopcsi.controller.TransferEnd.Destination;
import io.loopcsi.handoff.LoopTransferSpec;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;

/**
 * When the controller deletes a LoopTransfer (and with it the source node's copy of the source):
 * what a user would notice is a leaked transfer that goes, an answered one that goes, and an
 * in-progress one, or one the controller could not read the volume of, that stays.
 */
class TransferEndTest {

    static final Instant WRITTEN = Instant.parse("2026-12-05T12:00:00Z");
    /** 1 GiB at 100 s answer timeout: the window ends 100 + 102 + 60 s after it was written. */
    static final LoopTransferSpec SPEC = TransferIntents.spec("p", "vol-dest", "vol-src", "a", "b", 1L << 30, null, WRITTEN,
            Duration.ofSeconds(100));
    static final Instant END = Instant.parse(SPEC.getNotAfter());

    @Test
    void aTransferWhoseVolumeWasRemovedGoesOnceItsWindowHasEnded() {
        Optional<String> why = TransferEnd.over(SPEC, Destination.ABSENT, END);
        assertTrue(why.isPresent(), "leaked: nothing would ever delete it");
        assertEquals("its destination volume is gone and its window ended at " + SPEC.getNotAfter(), why.get());
        assertTrue(TransferEnd.over(SPEC, Destination.ABSENT, END.plus(Duration.ofDays(3))).isPresent());
    }

    @Test
    void aTransferWithoutItsVolumeStaysWhileItsWindowIsLive() {
        // its CreateVolume may be between writing it and writing the intent, or about to retry (which renews the window)
        assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.ABSENT, WRITTEN));
        assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.ABSENT, END.minusMillis(1)));
    }

    @Test
    void aTransferUnderWayStaysEvenPastItsWindow() {
        assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.PENDING, WRITTEN.plusSeconds(5)));
        assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.PENDING, END.plus(Duration.ofDays(1))),
                "the destination resumes once a retried CreateVolume renews the window");
    }

    @Test
    void anAnsweredTransferGoes() {
        Optional<String> why = TransferEnd.over(SPEC, Destination.ANSWERED, WRITTEN.plus(TransferEnd.RENEWAL_GRACE).plusSeconds(1));
        assertEquals(Optional.of("its destination volume is answered"), why, "its window is still live: the answer ends it");
        assertTrue(TransferEnd.over(SPEC, Destination.ANSWERED, END.plusSeconds(1)).isPresent());
    }

    @Test
    void anAnswerOlderThanARenewalJustWrittenKeepsIt() {
        // a retry of a failed volume renews the transfer, then writes the attempt the old answer does not answer
        assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.ANSWERED, WRITTEN.plusSeconds(1)));
        assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.ANSWERED, WRITTEN.plus(TransferEnd.RENEWAL_GRACE)));
    }

    @Test
    void anUnreadableVolumeKeepsEveryTransfer() {
        for (Instant now : new Instant[] { WRITTEN, END, END.plus(Duration.ofDays(3)) }) {
            assertEquals(Optional.empty(), TransferEnd.over(SPEC, Destination.UNKNOWN, now), "at " + now);
        }
    }

    @Test
    void aWindowThatCannotBeReadAuthorisesNothingAndEndsWithItsVolumeGone() {
        LoopTransferSpec bad = TransferIntents.spec("p", "vol-dest", "vol-src", "a", "b", 0, null, WRITTEN, Duration.ofSeconds(100));
        bad.setNotAfter("tomorrow");
        assertTrue(TransferEnd.over(bad, Destination.ABSENT, WRITTEN).isPresent());
        assertEquals(Optional.empty(), TransferEnd.over(null, Destination.ABSENT, END), "no spec: not ours to judge");
    }

    @Test
    void theDestinationIsWhatItsLoopVolumeShows() {
        assertEquals(Destination.ABSENT, Destination.of(null));
        LoopVolume v = new LoopVolume("p.vol-dest", new LoopVolumeSpec());
        v.getMetadata().setGeneration(2L);
        assertEquals(Destination.PENDING, Destination.of(v), "no status yet");
        LoopVolumeStatus s = new LoopVolumeStatus();
        s.setPhase(Phase.READY);
        s.setObservedGeneration(1L);
        v.setStatus(s);
        assertEquals(Destination.PENDING, Destination.of(v), "a new attempt its node has not answered");
        s.setObservedGeneration(2L);
        assertEquals(Destination.ANSWERED, Destination.of(v));
    }
}
