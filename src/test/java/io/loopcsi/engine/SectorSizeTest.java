package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static io.loopcsi.testing.Data.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/**
 * The sector size of a volume's loop device (issue 22), on real loop devices and host filesystems
 * made for the test: an xfs host with reflinks (on current kernels a file that shares blocks has a
 * 4 KiB direct-I/O alignment there) and an ext4 host on a disk with 4 KiB logical sectors. A volume
 * keeps the size it was made with through snapshots, restores and restages, and gets direct I/O; a
 * volume recorded before sizes were gets the size its filesystem allows, and says when direct I/O
 * fell back to buffered I/O.
 */
class SectorSizeTest extends KernelTestDirs {

    private static final List<String> NO_FLAGS = List.of();
    private static final long XFS = 320 * MIB;

    /** A host filesystem of its own, on a loop device with hostSectors-byte sectors, mounted at dir/home. */
    private Path host(String fsType, int hostSectors) throws Exception {
        Path img = dir.resolve("host.img");
        PoolDirectory.createSparse(img, 2L << 30);
        String dev = Rig.RUNNER.run("losetup", "--find", "--show", "--sector-size", Integer.toString(hostSectors), img.toString()).strip();
        if (fsType.equals("xfs")) {
            Rig.RUNNER.run("mkfs.xfs", "-q", "-m", "reflink=1", dev);
        } else {
            Rig.RUNNER.run("mkfs.ext4", "-q", dev);
        }
        Path home = Files.createDirectories(dir.resolve("home"));
        Rig.RUNNER.run("mount", dev, home.toString());
        return home;
    }

    private static VolumeMeta xfs(Rig rig, String name, String sourceSnapshot, MutableParameters mutable) {
        return rig.engine.createVolume(new CreateRequest(name, XFS, 0, VolumeMode.FILESYSTEM, "xfs", sourceSnapshot, null, Map.of(), mutable));
    }

    private static String device(Rig rig, VolumeMeta v) {
        return rig.loops.find(rig.image(v)).orElseThrow();
    }

    private static MutableParameters directIo(String value) {
        return MutableParameters.parse("mutable_parameters", Map.of(MutableParameters.DIRECT_IO, value));
    }

    @Test
    void onAReflinkXfsHostVolumesGet4KSectorsAndKeepThemThroughSnapshotRestoreAndRestage() throws Exception {
        Rig rig = new Rig(host("xfs", 512).resolve("pool"), 8 * Rig.GIB);
        VolumeMeta v = xfs(rig, "data", null, MutableParameters.NONE);
        assertEquals(4096, v.logicalBlockSize(), "a file sharing blocks on xfs needs 4 KiB sectors for direct I/O");
        assertEquals(4096, rig.pool.readVolume(v.id()).orElseThrow().logicalBlockSize(), "recorded in the metadata");

        Path staging = dir.resolve("staging");
        rig.node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false);
        String dev = device(rig, v);
        assertEquals(4096, rig.loops.logicalBlockSize(dev));
        assertTrue(rig.loops.directIo(dev), "direct I/O on");
        byte[] data = randomBytes(1 << 20, 22);
        Files.write(staging.resolve("f"), data);
        Rig.RUNNER.run("sync", "--file-system", staging.toString());

        SnapshotMeta s = rig.engine.createSnapshot("snap", v.id()); // a reflink copy: the volume's image now shares blocks
        assertEquals(4096, s.logicalBlockSize());
        rig.node.unstage(v.id(), staging);
        rig.node.stage(v.id(), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false); // mounted again, after the snapshot
        assertArrayEquals(data, Files.readAllBytes(staging.resolve("f")));
        assertTrue(rig.loops.directIo(device(rig, v)), "direct I/O on the shared image");

        VolumeMeta r = xfs(rig, "restored", s.id(), MutableParameters.NONE);
        assertEquals(4096, r.logicalBlockSize(), "a restore keeps its source's sectors");
        Path staging2 = dir.resolve("staging2");
        rig.node.stage(r.id(), staging2, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false);
        assertArrayEquals(data, Files.readAllBytes(staging2.resolve("f")));
        assertTrue(rig.loops.directIo(device(rig, r)));
        assertEquals("volume is healthy", rig.node.stats(r.id(), staging2).condition().message());
        assertEquals(0, rig.loops.bufferedVolumes(rig.pool, rig.pool.listVolumes(), rig.loops.attachedUnder(rig.pool.root())), "both staged volumes do direct I/O");
        rig.node.unstage(r.id(), staging2);
        rig.node.unstage(v.id(), staging);
    }

    /**
     * What an earlier version left on such a host: an xfs made on a 512-byte device, metadata
     * without a sector size, an image that shares blocks since its snapshot (the kernel would now
     * give its device 4096-byte sectors, on which that xfs does not mount). It stages with the size
     * its superblock allows, recorded from then on; direct I/O is off there, which its condition
     * says, and directIO=on is refused without harm to the volume.
     */
    @Test
    void aVolumeRecordedBeforeSectorSizesStagesWithTheSizeItsFilesystemAllows() throws Exception {
        Rig rig = new Rig(host("xfs", 512).resolve("pool"), 8 * Rig.GIB);
        VolumeMeta made = xfs(rig, "old", null, MutableParameters.NONE);
        Path image = rig.image(made);
        String dev = Rig.RUNNER.run("losetup", "--find", "--show", "--sector-size", "512", image.toString()).strip();
        Rig.RUNNER.run("mkfs.xfs", "-q", "-K", dev);
        rig.loops.detach(dev);
        VolumeMeta legacy = made.withLogicalBlockSize(0);
        rig.pool.writeVolume(legacy);
        rig.engine.createSnapshot("old-snap", legacy.id());

        Path staging = dir.resolve("staging");
        rig.node.stage(legacy.id(), staging, VolumeMode.FILESYSTEM, "xfs", NO_FLAGS, false);
        dev = device(rig, legacy);
        assertEquals(512, rig.loops.logicalBlockSize(dev), "the xfs was made with 512-byte sectors");
        assertEquals(512, rig.pool.readVolume(legacy.id()).orElseThrow().logicalBlockSize(), "recorded once decided");
        Files.writeString(staging.resolve("still-writable"), "yes");
        assertFalse(rig.loops.directIo(dev), "the shared image needs 4 KiB alignment for direct I/O");
        Condition c = rig.node.stats(legacy.id(), staging).condition();
        assertFalse(c.abnormal(), c.message());
        assertTrue(c.message().contains("buffered I/O") && c.message().contains("512-byte sectors"), c.message());
        assertEquals(1, rig.loops.bufferedVolumes(rig.pool, rig.pool.listVolumes(), rig.loops.attachedUnder(rig.pool.root())), "the loopcsi_volumes_buffered gauge counts it");

        EngineException e = expect(Kind.FAILED_PRECONDITION, () -> rig.engine.modifyVolume(legacy.id(), directIo("on")));
        assertTrue(e.getMessage().contains("512-byte sectors"), e.getMessage());
        assertEquals("yes", Files.readString(staging.resolve("still-writable")), "the volume is untouched");
        assertEquals(MutableParameters.NONE.given(), rig.pool.readVolume(legacy.id()).orElseThrow().mutableParameters());
        rig.node.unstage(legacy.id(), staging);
    }

    @Test
    void onAHostWith4KSectorsVolumesGet4KSectorsAndDirectIo() throws Exception {
        Rig rig = new Rig(host("ext4", 4096).resolve("pool"), 8 * Rig.GIB);
        SectorSizes.Probe p = rig.sectors.probe();
        assertFalse(p.directIo512(), "512-byte sectors on a 4 KiB disk: buffered only");
        assertTrue(p.directIo4096());
        VolumeMeta block = rig.engine.createVolume(new CreateRequest("blk", 64 * MIB, 0, VolumeMode.BLOCK, "", null, null, Map.of(),
                directIo("on")));
        assertEquals(4096, block.logicalBlockSize());
        Path staging = dir.resolve("staging");
        rig.node.stage(block.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false);
        String dev = device(rig, block);
        assertEquals(4096, rig.loops.logicalBlockSize(dev));
        assertTrue(rig.loops.directIo(dev), "directIO=on is met");
        rig.node.unstage(block.id(), staging);

        // the same volume as an earlier version might have left it: 512-byte sectors recorded, directIO=on
        rig.pool.writeVolume(block.withLogicalBlockSize(512));
        EngineException e = expect(Kind.FAILED_PRECONDITION,
                () -> rig.node.stage(block.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false));
        assertTrue(e.getMessage().contains("directIO=on") && e.getMessage().contains("512-byte sectors"), e.getMessage());
        assertTrue(rig.loops.findAll(rig.image(block)).isEmpty(), "a refused stage leaves no device behind");
    }

    @Test
    void theFilesystemInAnImageBoundsItsSectorSize() throws Exception {
        Map<List<String>, Integer> made = Map.of(List.of("mkfs.xfs", "-q", "-s", "size=512"), 512, List.of("mkfs.xfs", "-q", "-s", "size=4096"),
                4096, List.of("mkfs.ext4", "-q", "-b", "1024"), 1024, List.of("mkfs.ext4", "-q", "-b", "4096"), 4096);
        for (Map.Entry<List<String>, Integer> m : made.entrySet()) {
            Path img = image(String.join("", m.getKey()).replaceAll("[^a-z0-9]", ""));
            List<String> cmd = new java.util.ArrayList<>(m.getKey());
            cmd.add(img.toString());
            Rig.RUNNER.run(cmd.toArray(String[]::new));
            assertEquals(m.getValue(), SectorSizes.limitOf(SectorSizes.readHead(img)), String.join(" ", m.getKey()));
        }
        assertEquals(0, SectorSizes.limitOf(SectorSizes.readHead(image("blank"))), "nothing there: no bound");
        assertEquals(0, SectorSizes.limitOf(new byte[10]));
    }

    private Path image(String name) throws Exception {
        Path p = dir.resolve(name + ".img");
        PoolDirectory.createSparse(p, XFS);
        return p;
    }
}
