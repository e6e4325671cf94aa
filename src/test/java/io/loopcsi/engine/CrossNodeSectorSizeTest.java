package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static io.loopcsi.testing.Data.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/**
 * A restore from another node keeps its source's sector size, as a same-node restore does
 * ({@link SectorSizeTest}): two pools on host filesystems of their own, one on a disk with 4 KiB
 * logical sectors (its volumes get 4096-byte sectors), one on a 512-byte disk (its new volumes get
 * 512). The transfer itself is stood in for by a copy of the source's image (the fill); what is
 * under test is what the destination makes around it.
 */
class CrossNodeSectorSizeTest extends KernelTestDirs {

    private static final long XFS = 320 * MIB;

    /** A host filesystem (ext4) on a loop device with hostSectors-byte sectors, mounted at dir/name. */
    private Path host(String name, int hostSectors) throws Exception {
        Path img = dir.resolve(name + ".img");
        PoolDirectory.createSparse(img, 2L << 30);
        String dev = Rig.RUNNER.run("losetup", "--find", "--show", "--sector-size", Integer.toString(hostSectors), img.toString()).strip();
        Rig.RUNNER.run("mkfs.ext4", "-q", dev);
        Path home = Files.createDirectories(dir.resolve(name));
        Rig.RUNNER.run("mount", dev, home.toString());
        return home.resolve("pool");
    }

    private static VolumeEngine.ImageFill copyOf(Path source) {
        return (image, bytes) -> {
            Rig.RUNNER.run("cp", "--sparse=always", source.toString(), image.toString());
            assertEquals(bytes, image.toFile().length());
        };
    }

    @Test
    void aRestoreFromA4KSectorNodeOntoA512SectorNodeKeeps4KSectors() throws Exception {
        Rig x = new Rig(host("x", 4096), 4 * Rig.GIB);
        Rig y = new Rig(host("y", 512), 4 * Rig.GIB);
        assertEquals(512, y.sectors.forNewVolume(), "the destination would give a new volume 512-byte sectors");

        VolumeMeta v = x.engine.createVolume(new CreateRequest("data", XFS, 0, VolumeMode.FILESYSTEM, "xfs", null, null, Map.of()));
        assertEquals(4096, v.logicalBlockSize());
        Path staging = dir.resolve("staging-x");
        x.node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "xfs", List.of(), false);
        byte[] data = randomBytes(1 << 20, 35);
        Files.write(staging.resolve("f"), data);
        Rig.RUNNER.run("sync", "--file-system", staging.toString());
        x.node.unstage(v.id(), staging);
        SnapshotMeta s = x.engine.createSnapshot("snap", v.id());

        CreateRequest restore = new CreateRequest("restored", XFS, 0, VolumeMode.FILESYSTEM, "xfs", s.id(), null, Map.of());
        VolumeMeta r = y.engine.createVolumeFrom(restore, new VolumeEngine.RemoteSource("x", null, null, s.sizeBytes(), s.logicalBlockSize()),
                copyOf(x.pool.snapshotImage(s.id())));
        assertEquals(4096, r.logicalBlockSize(), "the source's sector size, not the destination's choice");
        assertEquals(4096, y.pool.readVolume(r.id()).orElseThrow().logicalBlockSize(), "recorded for every later attach");

        Path staging2 = dir.resolve("staging-y");
        y.node.stage(r.id(), staging2, VolumeMode.FILESYSTEM, "xfs", List.of(), false);
        String dev = y.loops.find(y.image(r)).orElseThrow();
        assertEquals(4096, y.loops.logicalBlockSize(dev), "the loop device on the destination has the source's sectors");
        assertArrayEquals(data, Files.readAllBytes(staging2.resolve("f")));
        y.node.unstage(r.id(), staging2);
    }

    @Test
    void withoutAPublishedSizeTheContentDecidesAndAnInvalidOneIsRefused() throws Exception {
        Rig y = new Rig(host("y", 512), 4 * Rig.GIB);
        Path xfs = dir.resolve("made-for-4k.img");
        PoolDirectory.createSparse(xfs, XFS);
        Rig.RUNNER.run("mkfs.xfs", "-q", "-s", "size=4096", xfs.toString());
        CreateRequest restore = new CreateRequest("restored", XFS, 0, VolumeMode.FILESYSTEM, "xfs", "snap-1", null, Map.of());
        VolumeMeta r = y.engine.createVolumeFrom(restore, new VolumeEngine.RemoteSource("x", null, null, XFS, 0), copyOf(xfs));
        assertTrue(r.logicalBlockSize() <= 4096 && SectorSizes.valid(r.logicalBlockSize()), "a size its xfs mounts on: " + r.logicalBlockSize());

        EngineException e = expect(Kind.INVALID_ARGUMENT, () -> new VolumeEngine.RemoteSource("x", null, null, XFS, 1000));
        assertTrue(e.getMessage().contains("1000"), e.getMessage());
    }
}
