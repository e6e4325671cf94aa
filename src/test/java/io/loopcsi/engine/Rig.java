package io.loopcsi.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.function.Executable;

import io.loopcsi.testing.Data;

/** The engine's objects wired together on a pool directory, plus helpers the engine tests share. */
final class Rig {

    static final long MIB = Sizes.MIB;
    static final long GIB = Sizes.GIB;
    /** One runner for all tests: each runner owns a pipe-reader thread pool. */
    static final CommandRunner RUNNER = new CommandRunner(Duration.ofSeconds(120));

    final PoolDirectory pool;
    final LoopDevices loops = new LoopDevices(RUNNER);
    final VolumeLocks locks = new VolumeLocks();
    final Mounter mounter = new Mounter(RUNNER);
    final Filesystems filesystems = new Filesystems(RUNNER);
    final ThickAllocation thick;
    final SectorSizes sectors;
    final VolumeEngine engine;
    final NodeVolumes node;

    Rig(Path poolDir, long capacityBytes) {
        this(poolDir, CapacityPolicy.cap(capacityBytes));
    }

    Rig(Path poolDir, CapacityPolicy policy) {
        pool = new PoolDirectory(poolDir);
        thick = new ThickAllocation(pool, RUNNER, locks);
        sectors = new SectorSizes(pool, RUNNER, loops);
        engine = new VolumeEngine(pool, policy, "node-1", RUNNER, loops, locks, FailPoints.NONE, thick, sectors);
        node = new NodeVolumes(pool, loops, mounter, filesystems, locks, thick, sectors);
    }

    VolumeMeta block(String name, long bytes) {
        return engine.createVolume(new CreateRequest(name, bytes, 0, VolumeMode.BLOCK, "", null, null, Map.of()));
    }

    VolumeMeta thickBlock(String name, long bytes) {
        return engine.createVolume(new CreateRequest(name, bytes, 0, VolumeMode.BLOCK, "", null, null, Map.of(),
                new MutableParameters(Map.of(MutableParameters.PROVISIONING, "thick"))));
    }

    VolumeMeta fs(String name, String fsType, long bytes) {
        return engine.createVolume(new CreateRequest(name, bytes, 0, VolumeMode.FILESYSTEM, fsType, null, null, Map.of()));
    }

    Path image(VolumeMeta v) {
        return pool.volumeImage(v.id());
    }

    // ---- helpers ----------------------------------------------------------------------------

    static EngineException expect(EngineException.Kind kind, Executable call) {
        EngineException e = assertThrows(EngineException.class, call);
        assertEquals(kind, e.kind(), "wrong kind; message: " + e.getMessage());
        return e;
    }

    /** Bytes the host filesystem has really allocated for a file (st_blocks * 512). */
    static long allocatedBytes(Path file) {
        String out = RUNNER.run("stat", "--format", "%b %B", file.toString()).strip();
        String[] f = out.split("\\s+");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }

    static String sha256(Path file) throws Exception {
        return Data.sha256(Files.readAllBytes(file));
    }

    /** Mounts (topmost first excluded) whose mount point is exactly this path. */
    static List<MountTable.Entry> mountsAt(Path p) {
        return MountTable.read().entries().stream().filter(e -> e.mountPoint().equals(p.toString())).toList();
    }

    /** The filesystem type blkid finds in a file or device, or "" for none. */
    static String blkidType(Path fileOrDevice) {
        CommandRunner.Result r = RUNNER.exec("blkid", "--probe", "--match-tag", "TYPE", "--output", "value", fileOrDevice.toString());
        return r.stdout().strip();
    }
}
