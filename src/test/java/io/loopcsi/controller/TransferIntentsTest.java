package io.loopcsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.loopcsi.handoff.LoopTransferSpec;

/** The authorisation the controller writes for a cross-node restore or clone: its window (docs/architecture.md, "Transfer"). */
class TransferIntentsTest {

    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");

    @Test
    void theWindowCoversTheAnswerTimeoutAndTheSizeAtTheFloorRateFromAMinuteAgo() {
        long gib = 1L << 30; // 102.4 s at 10 MiB/s
        LoopTransferSpec s = TransferIntents.spec("p", "vol-1", "snap-1", "x", "y", gib, 4096, NOW, Duration.ofSeconds(100));
        assertEquals("2026-12-05T11:59:00Z", s.getNotBefore(), "a node's clock a minute behind is still inside");
        assertEquals(NOW.plusSeconds(100 + 102 + 60).toString(), s.getNotAfter());
        assertEquals("vol-1", s.getTransferId());
        assertEquals("vol-1", s.getDestinationVolumeId());
        assertEquals("snap-1", s.getSource());
        assertEquals("x", s.getSourceNode());
        assertEquals("y", s.getDestinationNode());
        assertEquals(gib, s.getSizeBytes());
        assertEquals("p", s.getPool());
        assertEquals(4096, s.getLogicalBlockSize(), "the destination's loop device gets the source's sector size");
    }

    @Test
    void theWindowIsAtMost24Hours() {
        LoopTransferSpec s = TransferIntents.spec("p", "vol-1", "vol-2", "x", "y", 1L << 50, null, NOW, Duration.ofSeconds(100));
        assertEquals(NOW.plus(Duration.ofHours(24)).toString(), s.getNotAfter());
        assertEquals(null, s.getLogicalBlockSize(), "a source whose node published none: the destination derives it from the content");
    }
}
