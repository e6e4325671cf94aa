package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/**
 * The host reserve and the thin overcommit ratio (issue 24, part 4) on a real small host
 * filesystem (a 160 MiB ext4 image): what the engine admits, refuses and reports.
 */
class ReservedSpaceTest extends KernelTestDirs {

    private Path smallHost() throws Exception {
        Path img = dir.resolve("host.img");
        PoolDirectory.createSparse(img, 160 * MIB);
        Rig.RUNNER.run("mkfs.ext4", "-q", "-m", "0", img.toString());
        Path home = Files.createDirectories(dir.resolve("home"));
        Rig.RUNNER.run("mount", "-o", "loop", img.toString(), home.toString());
        return home.resolve("pool");
    }

    @Test
    void theHostReserveIsNeverOffered() throws Exception {
        Path poolDir = smallHost();
        long unreserved = new Rig(poolDir, 10 * Rig.GIB).engine.capacity().availableBytes();
        PoolLock.releaseAllUnder(dir);
        Rig rig = new Rig(poolDir, new CapacityPolicy(10 * Rig.GIB, 64 * MIB, 1));
        PoolCapacity c = rig.engine.capacity();
        assertEquals(64 * MIB, c.hostReserveBytes());
        assertTrue(Math.abs(unreserved - 64 * MIB - c.availableBytes()) < 2 * MIB, unreserved + " -> " + c);

        EngineException e = expect(Kind.RESOURCE_EXHAUSTED, () -> rig.block("big", c.availableBytes() + 8 * MIB));
        assertTrue(e.getMessage().contains("64Mi is the host's reserve"), e.getMessage());
        VolumeMeta fits = rig.block("fits", c.availableBytes() / MIB * MIB);
        assertTrue(rig.engine.capacity().availableBytes() < MIB, "what is left is the reserve: " + rig.engine.capacity());
        assertTrue(Files.getFileStore(poolDir).getUsableSpace() > 64 * MIB + fits.capacityBytes() - 2 * MIB,
                "the volume can still be written whole and leave the reserve");
    }

    @Test
    void thinVolumesMayPassTheCapUpToTheRatioThickOnesMayNot() throws Exception {
        Rig rig = new Rig(smallHost(), new CapacityPolicy(64 * MIB, 0, 2));
        VolumeMeta a = rig.block("a", 48 * MIB);
        PoolCapacity afterA = rig.engine.capacity();
        assertEquals(24 * MIB, afterA.chargedBytes(), "a thin volume is charged half its size");
        assertEquals(80 * MIB, afterA.availableBytes(), "(64 - 24) x 2");
        assertEquals(40 * MIB, afterA.availableThickBytes());

        EngineException thick = expect(Kind.RESOURCE_EXHAUSTED, () -> rig.thickBlock("t", 48 * MIB));
        assertTrue(thick.getMessage().contains("40Mi available for thick volumes"), thick.getMessage());
        rig.block("b", 80 * MIB); // 128Mi of thin volumes on a 64Mi cap
        PoolCapacity full = rig.engine.capacity();
        assertEquals(128 * MIB, full.allocatedBytes());
        assertEquals(0, full.availableBytes());
        EngineException capped = expect(Kind.RESOURCE_EXHAUSTED, () -> rig.block("c", 2 * MIB));
        assertTrue(capped.getMessage().contains("thin volumes at 1/2 of their size"), capped.getMessage());

        // thin to thick charges the other half: refused while the cap is spent, the volume untouched
        EngineException modify = expect(Kind.RESOURCE_EXHAUSTED,
                () -> rig.engine.modifyVolume(a.id(), new MutableParameters(Map.of(MutableParameters.PROVISIONING, "thick"))));
        assertTrue(modify.getMessage().contains("a charge of 24Mi"), modify.getMessage());
        assertEquals(false, rig.engine.volume(a.id()).orElseThrow().mutable().thick());
        assertTrue(Rig.allocatedBytes(rig.image(a)) < MIB, "nothing allocated by the refused modify");
    }

    @Test
    void theHostsFreeSpaceStillBoundsOvercommittedThinVolumes() throws Exception {
        Rig rig = new Rig(smallHost(), new CapacityPolicy(Rig.GIB, 0, 10));
        PoolCapacity empty = rig.engine.capacity();
        assertTrue(empty.availableBytes() < 160 * MIB, "the cap x 10 is 10Gi, the host has less: " + empty);
        VolumeMeta a = rig.block("a", empty.availableBytes() / MIB * MIB - 8 * MIB);
        EngineException e = expect(Kind.RESOURCE_EXHAUSTED, () -> rig.block("b", 16 * MIB));
        assertTrue(e.getMessage().contains("promised to existing volumes"), e.getMessage());
        assertTrue(rig.engine.capacity().hostPromisedBytes() >= a.capacityBytes() - MIB,
                "every thin image is promised its unwritten size, overcommit or not");
    }

    @Test
    void aReserveOfTheWholeHostFilesystemIsReported() throws Exception {
        Rig rig = new Rig(smallHost(), new CapacityPolicy(Rig.GIB, 200 * MIB, 1));
        PoolCapacity c = rig.engine.capacity();
        assertEquals(0, c.availableBytes());
        assertTrue(c.problem().startsWith("the host reserve 200Mi is not less than the size of the host filesystem"), c.problem());
    }
}
