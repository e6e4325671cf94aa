package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.grpc.Status;
import io.loopcsi.engine.EngineException;

/** What a destination asks again after, and how often (TransferFetch: a source's restart must not fail the volume). */
class TransferFetchRetryTest {

    @Test
    void aSourceUnreachableOrStoppingIsACutAskedAgainAndOtherAnswersAreNot() {
        assertTrue(TransferFetch.cut(Status.Code.UNAVAILABLE), "unreachable, or its new certificate not yet published");
        assertTrue(TransferFetch.cut(Status.Code.CANCELLED), "a source that stops cancels its streams");
        for (Status.Code c : List.of(Status.Code.PERMISSION_DENIED, Status.Code.NOT_FOUND, Status.Code.DATA_LOSS, Status.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION, Status.Code.INTERNAL)) {
            assertFalse(TransferFetch.cut(c), c + " is an answer, not a cut");
        }
    }

    @Test
    void aCutIsAskedAgainWithinEightSecondsOfTheSourcesReturnForUpToTwoMinutes() {
        TransferFetch.Backoff b = new TransferFetch.Backoff(TransferFetch.CUT_PAUSE);
        List<Long> pauses = new ArrayList<>();
        while (b.waited() < TransferFetch.CUT_WAIT.toNanos()) {
            pauses.add(TimeUnit.NANOSECONDS.toSeconds(b.next()));
        }
        assertEquals(List.of(1L, 2L, 4L, 8L, 8L, 8L), pauses.subList(0, 6));
        long sum = pauses.stream().mapToLong(Long::longValue).sum();
        assertTrue(sum >= 120 && sum < 128, "asked again for two minutes, the last pause at most 8 s past: " + pauses);
    }

    @Test
    void aStoppingNodeEndsItsFetchAbortedNotFailed() {
        EngineException e = TransferFetch.stopping("vol-1");
        assertEquals(EngineException.Kind.ABORTED, e.kind(), "the handler writes no failure for ABORTED, the engine keeps the image");
        assertTrue(e.getMessage().contains("goes on from its last checkpoint"), e.getMessage());
    }
}
