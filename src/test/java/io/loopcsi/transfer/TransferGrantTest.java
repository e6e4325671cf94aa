package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** One source, one destination, one window: every other call is refused with the rule it broke. */
class TransferGrantTest {

    static final Instant T0 = Instant.parse("2026-12-05T19:00:00Z");
    static final TransferGrant GRANT = new TransferGrant("t1", "snap-1", "node-x", "node-y", T0, T0.plus(Duration.ofMinutes(30)));

    @Test
    void theAuthorisedDestinationGetsTheAuthorisedSourceInsideTheWindow() {
        TransferGrant.check(GRANT, "t1", "snap-1", "node-x", "node-y", T0);
        TransferGrant.check(GRANT, "t1", "snap-1", "node-x", "node-y", T0.plus(Duration.ofMinutes(29)));
    }

    @Test
    void everythingElseIsRefused() {
        denied("no LoopTransfer names it", () -> TransferGrant.check(null, "t1", "snap-1", "node-x", "node-y", T0));
        denied("not of t2", () -> TransferGrant.check(GRANT, "t2", "snap-1", "node-x", "node-y", T0));
        denied("this is node node-z", () -> TransferGrant.check(GRANT, "t1", "snap-1", "node-z", "node-y", T0));
        denied("the caller is node node-z", () -> TransferGrant.check(GRANT, "t1", "snap-1", "node-x", "node-z", T0));
        denied("the caller is not identified", () -> TransferGrant.check(GRANT, "t1", "snap-1", "node-x", null, T0));
        denied("not for snap-2", () -> TransferGrant.check(GRANT, "t1", "snap-2", "node-x", "node-y", T0));
        denied("not at " + T0.minusSeconds(1), () -> TransferGrant.check(GRANT, "t1", "snap-1", "node-x", "node-y", T0.minusSeconds(1)));
        denied("not at " + GRANT.notAfter(), () -> TransferGrant.check(GRANT, "t1", "snap-1", "node-x", "node-y", GRANT.notAfter()));
        TransferGrant forever = new TransferGrant("t1", "snap-1", "node-x", "node-y", T0, T0.plus(Duration.ofDays(30)));
        denied("longer than 24 h", () -> TransferGrant.check(forever, "t1", "snap-1", "node-x", "node-y", T0));
    }

    static void denied(String why, Executable call) {
        TransferException e = assertThrows(TransferException.class, call);
        assertEquals(TransferException.Kind.DENIED, e.kind());
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }
}
