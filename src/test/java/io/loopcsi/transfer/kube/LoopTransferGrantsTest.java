package io.loopcsi.transfer.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.loopcsi.handoff.LoopTransferSpec;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;

/** A LoopTransfer's spec as the grant the source node checks; an object that does not match its name authorises nothing. */
class LoopTransferGrantsTest {

    static LoopTransferSpec spec(String pool, String id, String notBefore, String notAfter) {
        LoopTransferSpec s = new LoopTransferSpec();
        s.setPool(pool);
        s.setTransferId(id);
        s.setSource("snap-0123456789abcdef0123456789abcdef");
        s.setSourceNode("x");
        s.setDestinationNode("y");
        s.setNotBefore(notBefore);
        s.setNotAfter(notAfter);
        return s;
    }

    @Test
    void theSpecIsTheGrant() {
        TransferGrant g = LoopTransferGrants.of(spec("p", "t1", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"), "p", "t1");
        assertEquals(new TransferGrant("t1", "snap-0123456789abcdef0123456789abcdef", "x", "y", Instant.parse("2026-01-01T00:00:00Z"),
                Instant.parse("2026-01-01T01:00:00Z")), g);
    }

    @Test
    void anObjectOfAnotherPoolOrTransferOrWithoutAReadableWindowIsRefused() {
        for (LoopTransferSpec s : new LoopTransferSpec[] { spec("q", "t1", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"),
                spec("p", "t2", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"), spec("p", "t1", "yesterday", "2026-01-01T01:00:00Z"),
                spec("p", "t1", "2026-01-01T00:00:00Z", null) }) {
            TransferException e = assertThrows(TransferException.class, () -> LoopTransferGrants.of(s, "p", "t1"));
            assertEquals(TransferException.Kind.DENIED, e.kind(), e.getMessage());
        }
    }
}
