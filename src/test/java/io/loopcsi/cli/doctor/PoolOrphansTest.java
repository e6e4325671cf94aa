package io.loopcsi.cli.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.loopcsi.cli.doctor.Finding.Verdict;
import io.loopcsi.engine.OrphanList;

/** What doctor says about a pool directory's orphans, and that only a listed unclaimed image is ever removed. */
class PoolOrphansTest {

    static final String STRAY = "vol-" + "a".repeat(32);
    static final String CLAIMED = "vol-" + "b".repeat(32);

    @TempDir
    Path dir;

    @Test
    void withoutTheNodesAuditThereIsNothingToSay() {
        assertEquals(Verdict.skip, PoolOrphans.finding(dir).verdict());
        assertEquals(Verdict.skip, PoolOrphans.finding(dir.resolve("not-yet")).verdict(), "a directory that does not exist yet");
    }

    @Test
    void theAuditsOrphansAreListedWithTheCommandThatRemovesOne() {
        new OrphanList("p1", "node-a", "2026-01-01T00:00:00Z", List.of(), List.of()).write(dir);
        assertEquals(Verdict.ok, PoolOrphans.finding(dir).verdict());
        new OrphanList("p1", "node-a", "2026-01-01T00:00:00Z", List.of(STRAY), List.of("p1." + CLAIMED)).write(dir);
        Finding f = PoolOrphans.finding(dir);
        assertEquals(Verdict.warn, f.verdict());
        assertTrue(f.detail().contains("1 unclaimed (files no object names): " + STRAY), f.detail());
        assertTrue(f.detail().contains("1 missing (objects whose files are gone): p1." + CLAIMED), f.detail());
        assertTrue(f.fix().contains("--remove-orphan ID") && f.fix().contains("delete its claim"), f.fix());
    }

    @Test
    void onlyAnImageTheAuditListsAsUnclaimedIsRemoved() throws Exception {
        Path volumes = Files.createDirectories(dir.resolve("volumes"));
        for (String id : List.of(STRAY, CLAIMED)) {
            Files.writeString(volumes.resolve(id + ".img"), "data");
            Files.writeString(volumes.resolve(id + ".json"), "{}");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(1, PoolOrphans.remove(dir, STRAY, new PrintStream(out, true, StandardCharsets.UTF_8)), "no audit: nothing is known unclaimed");
        assertTrue(Files.exists(volumes.resolve(STRAY + ".img")));

        new OrphanList("p1", "node-a", "2026-01-01T00:00:00Z", List.of(STRAY), List.of()).write(dir);
        out.reset();
        assertEquals(1, PoolOrphans.remove(dir, CLAIMED, new PrintStream(out, true, StandardCharsets.UTF_8)));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("is not listed as unclaimed"), out.toString(StandardCharsets.UTF_8));
        assertTrue(Files.exists(volumes.resolve(CLAIMED + ".img")), "a volume some object names is never removed");

        out.reset();
        assertEquals(0, PoolOrphans.remove(dir, STRAY, new PrintStream(out, true, StandardCharsets.UTF_8)));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("removed "), out.toString(StandardCharsets.UTF_8));
        assertFalse(Files.exists(volumes.resolve(STRAY + ".img")));
        assertFalse(Files.exists(volumes.resolve(STRAY + ".json")));
        assertTrue(Files.exists(volumes.resolve(CLAIMED + ".json")));
    }

    /** Issue 35: an abandoned transfer's partial image is listed, with what it is and that the node deletes it. */
    @Test
    void anAbandonedTransferIsListedWithWhatItIsAndWhoDeletesIt() throws Exception {
        String partial = STRAY + " (an abandoned transfer's partial image volumes/" + STRAY + ".img.tmp, 96Mi, and its progress transfers/"
                + STRAY + ".json, 300 bytes)";
        new OrphanList("p1", "node-a", "2026-01-01T00:00:00Z", List.of(), List.of(), List.of(partial)).write(dir);
        Finding f = PoolOrphans.finding(dir);
        assertEquals(Verdict.warn, f.verdict());
        assertTrue(f.detail().contains("1 abandoned transfer(s) (a fetch into a volume no LoopVolume names): " + partial), f.detail());
        assertTrue(f.fix().contains("the node deletes it once no LoopTransfer authorises the transfer"), f.fix());
        assertFalse(f.fix().contains("--remove-orphan"), f.fix());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(1, PoolOrphans.remove(dir, STRAY, new PrintStream(out, true, StandardCharsets.UTF_8)), "not an unclaimed image");

        // a list an earlier version wrote has no such field
        Files.writeString(dir.resolve(OrphanList.FILE), "{\"pool\":\"p1\",\"node\":\"node-a\",\"since\":\"2026-01-01T00:00:00Z\","
                + "\"unclaimed\":[],\"missing\":[]}");
        assertEquals(List.of(), OrphanList.read(dir).orElseThrow().abandonedTransfers());
        assertEquals(Verdict.ok, PoolOrphans.finding(dir).verdict());
    }
}
