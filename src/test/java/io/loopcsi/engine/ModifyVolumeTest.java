package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.allocatedBytes;
import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/** Mutable parameters on real files and loop devices: thick images really allocated, direct I/O really switched. */
class ModifyVolumeTest extends KernelTestDirs {

    private static final long GIB = Rig.GIB;

    private static MutableParameters params(String... kv) {
        Map<String, String> m = new java.util.TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return MutableParameters.parse("mutable_parameters", m);
    }

    @Test
    void thickVolumesAreAllocatedOnTheHostAndCapacityFollows() {
        Rig rig = new Rig(dir.resolve("pool"), 64 * GIB);
        VolumeMeta born = rig.engine.createVolume(new CreateRequest("thick-at-birth", 48 * MIB, 0, VolumeMode.BLOCK, "", null, null,
                Map.of(), params("provisioning", "thick")));
        assertEquals(48 * MIB, allocatedBytes(rig.image(born)), "du of a thick image is its size");

        VolumeMeta thin = rig.block("thin-then-thick", 64 * MIB);
        assertTrue(allocatedBytes(rig.image(thin)) < MIB, "a thin image is sparse");
        long promisedBefore = rig.engine.capacity().hostPromisedBytes();

        VolumeMeta thick = rig.engine.modifyVolume(thin.id(), params("provisioning", "thick"));
        assertEquals(64 * MIB, allocatedBytes(rig.image(thin)));
        assertEquals("thick", thick.mutableParameters().get("provisioning"));
        assertEquals(promisedBefore - 64 * MIB, rig.engine.capacity().hostPromisedBytes(),
                "the host space a thick volume holds is no longer promised to it");
        assertEquals(thick, rig.engine.modifyVolume(thin.id(), params("provisioning", "thick")), "idempotent");
        assertEquals(thick, new PoolDirectory(dir.resolve("pool")).readVolume(thin.id()).orElseThrow(), "committed: read back from disk");

        rig.engine.expandVolume(thin.id(), 96 * MIB, 0);
        assertEquals(96 * MIB, allocatedBytes(rig.image(thin)), "a thick volume stays thick when it grows");
    }

    @Test
    void thickIsRefusedWhenTheHostFilesystemCannotHoldItAndNothingChanges() throws Exception {
        Path small = Files.createDirectories(dir.resolve("small"));
        Rig.RUNNER.run("mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", small.toString());
        Rig rig = new Rig(small.resolve("pool"), 64 * GIB);
        VolumeMeta v = rig.block("grows-later", 100 * MIB);
        // someone else fills the host filesystem after the volume was admitted
        Rig.RUNNER.run("fallocate", "--length", Long.toString(100 * MIB), small.resolve("other-tenant").toString());

        EngineException e = expect(Kind.RESOURCE_EXHAUSTED, () -> rig.engine.modifyVolume(v.id(), params("provisioning", "thick")));
        assertTrue(e.getMessage().contains("provisioning=thick"), e.getMessage());
        assertEquals(Map.of(), rig.pool.readVolume(v.id()).orElseThrow().mutableParameters(), "still thin");
        assertTrue(allocatedBytes(rig.image(v)) < MIB, "nothing allocated");
        expect(Kind.RESOURCE_EXHAUSTED, () -> rig.engine.createVolume(new CreateRequest("thick-too-big", 80 * MIB, 0, VolumeMode.BLOCK,
                "", null, null, Map.of(), params("provisioning", "thick"))));
    }

    @Test
    void directIoIsSwitchedOnTheLoopDeviceLiveAndAtAttach() throws Exception {
        Rig rig = new Rig(dir.resolve("pool"), 64 * GIB);
        VolumeMeta v = rig.block("dio", 16 * MIB);
        Path staging = dir.resolve("staging");
        rig.node.stage(v.id(), staging, VolumeMode.BLOCK, "", List.of(), false);
        String dev = rig.loops.find(rig.image(v)).orElseThrow();
        assumeTrue(rig.loops.directIo(dev), "the host filesystem under " + dir + " takes direct I/O on a loop device");

        rig.engine.modifyVolume(v.id(), params("directIO", "off"));
        assertEquals("0", sysDio(dev));
        assertEquals("0", losetupDio(dev));
        rig.engine.modifyVolume(v.id(), params("directIO", "on"));
        assertEquals("1", sysDio(dev));
        assertEquals("1", losetupDio(dev));

        rig.engine.modifyVolume(v.id(), params("directIO", "off"));
        rig.node.unstage(v.id(), staging);
        rig.node.stage(v.id(), staging, VolumeMode.BLOCK, "", List.of(), false);
        String again = rig.loops.find(rig.image(v)).orElseThrow();
        assertEquals("0", sysDio(again), "attached again with the volume's directIO=off");
        rig.node.unstage(v.id(), staging);
    }

    @Test
    void unknownKeysAndValuesAreNamedAndNothingIsParsed() {
        EngineException e = expect(Kind.INVALID_ARGUMENT, () -> MutableParameters.parse("mutable_parameters",
                Map.of("iops", "3000", "provisioning", "fat", "directIO", "on")));
        assertTrue(e.getMessage().contains("unknown key \"iops\"") && e.getMessage().contains("provisioning=\"fat\""), e.getMessage());
        assertTrue(!e.getMessage().contains("directIO=\"on\""), "a good pair is not named: " + e.getMessage());
    }

    private static String sysDio(String dev) throws Exception {
        return Files.readString(Path.of("/sys/block", Path.of(dev).getFileName().toString(), "loop/dio")).strip();
    }

    private static String losetupDio(String dev) {
        return Rig.RUNNER.run("losetup", "--noheadings", "--output", "DIO", dev).strip();
    }
}
