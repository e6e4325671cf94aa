package io.loopcsi.operator.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.operator.api.NodeOrphans;

class OrphansTest {

    @Test
    void eachNodeWithOrphansWithItsCountsAndTheFirstIds() {
        LoopPoolNode clean = LostNodesTest.report("a", Instant.EPOCH);
        LoopPoolNode both = LostNodesTest.report("b", Instant.EPOCH);
        List<String> many = IntStream.range(0, 50).mapToObj(i -> "vol-" + i).toList();
        both.getStatus().setUnclaimed(many);
        both.getStatus().setUnclaimedCount(70); // the node lists 50 of them
        both.getStatus().setMissing(List.of("p1.vol-x"));
        both.getStatus().setMissingCount(1);
        List<NodeOrphans> o = Orphans.of(List.of(clean, both));
        assertEquals(1, o.size(), "a node without orphans is not listed");
        assertEquals("b", o.get(0).getNode());
        assertEquals(70, o.get(0).getUnclaimed());
        assertEquals(1, o.get(0).getMissing());
        assertEquals(many.subList(0, 10), o.get(0).getUnclaimedIds());
        assertEquals(List.of("p1.vol-x"), o.get(0).getMissingObjects());
        assertTrue(Orphans.of(List.of(clean)).isEmpty());
    }

    /** Issue 35: a node whose audit lists only abandoned transfers is listed, with their count and the first of them. */
    @Test
    void abandonedTransfersAreANodesOrphansToo() {
        LoopPoolNode n = LostNodesTest.report("c", Instant.EPOCH);
        List<String> many = IntStream.range(0, 12).mapToObj(i -> "vol-" + i + " (an abandoned transfer's ...)").toList();
        n.getStatus().setAbandonedTransfers(many);
        n.getStatus().setAbandonedTransferCount(12);
        List<NodeOrphans> o = Orphans.of(List.of(n));
        assertEquals(1, o.size());
        assertEquals(0, o.get(0).getUnclaimed());
        assertEquals(12, o.get(0).getAbandonedTransfers());
        assertEquals(many.subList(0, 10), o.get(0).getAbandonedTransferFiles());
    }
}
