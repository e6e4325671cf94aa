package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;
import io.loopcsi.testing.KernelCleanup;

class IdsTest {

    private static Path dir;

    @BeforeAll
    static void makeDir() throws Exception {
        dir = Files.createTempDirectory(Path.of("/tmp"), "loopcsi-ids-");
    }

    @AfterAll
    static void removeDir() {
        KernelCleanup.releaseAndDelete(dir);
    }

    @Test
    void idsDerivedFromNamesAreStableAndDistinct() {
        String a = Ids.volumeIdFor("pvc-1234");
        assertEquals(a, Ids.volumeIdFor("pvc-1234"));
        assertEquals("vol-", a.substring(0, 4));
        assertEquals(36, a.length());
        assertNotEquals(a, Ids.volumeIdFor("pvc-1235"));
        assertNotEquals(a.substring(4), Ids.snapshotIdFor("pvc-1234").substring(5), "volume and snapshot of one name differ");
        assertTrue(Ids.isVolumeId(a));
        assertTrue(Ids.isSnapshotId(Ids.snapshotIdFor("snap")));
        assertFalse(Ids.isVolumeId(Ids.snapshotIdFor("snap")));
        assertFalse(Ids.isSnapshotId(a));
        // any name, even one with path or control characters, gives a well-formed ID
        assertTrue(Ids.isVolumeId(Ids.volumeIdFor("../../etc/passwd\0\n")));
    }

    @Test
    void derivationIsPinned() {
        // an ID must never change between releases: a retried create would make a second volume
        assertEquals("vol-a6e1b97f35f15e735b4e2ed14ffcd254", Ids.volumeIdFor("pvc-1"));
        assertEquals("snap-e0b39b0976617605dbcc645443a8afdc", Ids.snapshotIdFor("pvc-1"));
    }

    @Test
    void alphabetCheckRejectsEverythingElse() {
        String good = Ids.volumeIdFor("x");
        String hex = good.substring(4);
        String[] bad = {
            null, "", "vol-", "vol-" + hex.substring(1), // too short
            good + "0", // too long
            "vol-" + hex.toUpperCase(), // uppercase
            "vol-" + hex.substring(0, 30) + "/a", // slash
            "vol-" + hex.substring(0, 30) + "..", // dots
            "vol-../" + hex.substring(7), "../" + good, good + "/..",
            "vol-" + hex.substring(0, 31) + "\0", // NUL
            good + "\n", " " + good, "VOL-" + hex, "snap-" + hex,
            "vol-" + hex.substring(0, 31) + "g",
        };
        for (String id : bad) {
            assertFalse(Ids.isVolumeId(id), "accepted " + Ids.quote(id));
            expect(Kind.NOT_FOUND, () -> Ids.requireVolumeId(id));
        }
        assertFalse(Ids.isSnapshotId("snap-" + hex.toUpperCase()));
        assertFalse(Ids.isSnapshotId("snap-../" + hex.substring(3)));
        assertEquals(good, Ids.requireVolumeId(good));
    }

    @Test
    void noPathIsBuiltFromABadId() {
        PoolDirectory pool = new PoolDirectory(dir.resolve("pool"));
        expect(Kind.NOT_FOUND, () -> pool.volumeImage("../../etc/passwd"));
        expect(Kind.NOT_FOUND, () -> pool.readVolume("vol-../x"));
        expect(Kind.NOT_FOUND, () -> pool.snapshotImage("snap-/etc/shadow"));
        expect(Kind.NOT_FOUND, () -> pool.deleteVolume("/"));
        assertTrue(pool.volumeImage(Ids.volumeIdFor("a")).startsWith(pool.root().resolve("volumes")));
    }

    @Test
    void quoteEscapesControlCharactersAndBoundsLength() {
        assertEquals("\"a\\x00b\\x0a\"", Ids.quote("a\0b\n"));
        assertEquals("\"\"", Ids.quote(null));
        String q = Ids.quote("x".repeat(1000));
        assertTrue(q.length() < 120, q);
        assertTrue(q.contains("1000 chars"), q);
    }
}
