package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.PoolDirectory.PartialFetch;

/** The node's disk audit, both ways, and the fetches of abandoned transfers (issue 35). */
class DiskAuditTest {

    @Test
    void aFetchNoObjectNamesIsListedAsAnAbandonedTransferWithItsFilesAndSizes() {
        PartialFetch running = new PartialFetch("vol-1", 96L << 20, 300);
        PartialFetch abandoned = new PartialFetch("vol-2", 96L << 20, 310);
        PartialFetch progressOnly = new PartialFetch("vol-3", -1, 20);

        DiskAudit a = DiskAudit.of(Set.of("vol-0", "vol-9"), List.of(running, abandoned, progressOnly), Set.of("vol-0", "vol-1"),
                List.of(new DiskAudit.Made("p1.vol-0", "vol-0"), new DiskAudit.Made("p1.vol-8", "vol-8")));

        assertEquals(List.of("vol-9"), a.unclaimed(), "a partial image is no committed volume: not unclaimed");
        assertEquals(List.of("p1.vol-8"), a.missing());
        assertEquals(List.of(abandoned.describe(), progressOnly.describe()), a.abandoned(), "the running fetch has its LoopVolume");
        assertTrue(a.abandoned().get(0).contains("volumes/vol-2.img.tmp, 96Mi"), a.abandoned().get(0));
        assertTrue(a.summary().contains("2 abandoned transfer(s)"), a.summary());
        assertTrue(a.summary().contains("transfers/vol-3.json, 20 bytes"), a.summary());
    }

    @Test
    void withoutOrphansOrAbandonedFetchesTheAuditIsClean() {
        DiskAudit a = DiskAudit.of(Set.of("vol-0"), List.of(new PartialFetch("vol-1", 1 << 20, 5)), Set.of("vol-0", "vol-1"), List.of());
        assertTrue(a.isEmpty());
        assertEquals("every volume and snapshot on disk has its object, every object its files", a.summary());
    }
}
