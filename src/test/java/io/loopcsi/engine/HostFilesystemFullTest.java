package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static io.loopcsi.testing.Data.randomBytes;
import static io.loopcsi.testing.Data.readAt;
import static io.loopcsi.testing.Data.writeAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/**
 * The pool's home on a small filesystem made for the test (a 160 MiB ext4 image), with a pool
 * capacity far beyond it: the host's free space, less what existing sparse volumes may still
 * write, bounds every admission, so what cannot fit fails cleanly and existing volumes can
 * still be written to their full size.
 */
class HostFilesystemFullTest extends KernelTestDirs {

    static final List<String> NO_FLAGS = List.of();
    Rig rig;

    @BeforeEach
    void smallHost() throws Exception {
        Path img = dir.resolve("host.img");
        PoolDirectory.createSparse(img, 160 * MIB);
        Rig.RUNNER.run("mkfs.ext4", "-q", "-m", "0", img.toString());
        Path home = Files.createDirectories(dir.resolve("home"));
        Rig.RUNNER.run("mount", "-o", "loop", img.toString(), home.toString());
        rig = new Rig(home.resolve("pool"), 10 * Rig.GIB);
    }

    @Test
    void whatCannotFitOnTheHostIsRefusedAndExistingVolumesStayWritable() throws Exception {
        PoolCapacity empty = rig.engine.capacity();
        assertTrue(empty.availableBytes() < 160 * MIB && empty.availableBytes() > 100 * MIB, empty.toString());

        VolumeMeta a = rig.block("a", 64 * MIB);
        PoolCapacity withA = rig.engine.capacity();
        assertEquals(64 * MIB, withA.hostPromisedBytes(), "the whole unwritten image is promised");
        assertTrue(Math.abs(empty.availableBytes() - 64 * MIB - withA.availableBytes()) < 2 * MIB, empty + " -> " + withA);

        // write half of it through its loop device: the promise shrinks as the host fills, available stays
        Path staging = dir.resolve("stage-a");
        Path target = dir.resolve("pod/dev-a");
        rig.node.stage(a.id(), staging, VolumeMode.BLOCK, "", NO_FLAGS, false);
        rig.node.publish(a.id(), staging, target, VolumeMode.BLOCK, "", NO_FLAGS, false);
        byte[] half = randomBytes((int) (32 * MIB), 7);
        writeAt(target, 0, half);
        PoolCapacity halfFull = rig.engine.capacity();
        assertTrue(Math.abs(withA.availableBytes() - halfFull.availableBytes()) < 2 * MIB, withA + " -> " + halfFull);

        EngineException tooBig = expect(Kind.RESOURCE_EXHAUSTED, () -> rig.block("b", halfFull.availableBytes() + 8 * MIB));
        assertTrue(tooBig.getMessage().contains("host filesystem"), tooBig.getMessage());
        expect(Kind.RESOURCE_EXHAUSTED, () -> rig.engine.expandVolume(a.id(), 64 * MIB + halfFull.availableBytes() + 8 * MIB, 0));
        assertEquals(64 * MIB, rig.engine.volume(a.id()).orElseThrow().capacityBytes());

        SnapshotMeta s = rig.engine.createSnapshot("s1", a.id()); // 64 MiB admitted, 32 MiB really copied
        assertEquals(64 * MIB, s.sizeBytes());
        expect(Kind.RESOURCE_EXHAUSTED, () -> rig.engine.createSnapshot("s2", a.id()));
        try (var leftovers = Files.list(rig.pool.root().resolve("snapshots"))) {
            assertEquals(2, leftovers.count(), "only s1's image and metadata: a refused snapshot leaves nothing");
        }

        // the rest of volume a is still there to be written: no ENOSPC under its filesystem
        byte[] rest = randomBytes((int) (32 * MIB), 8);
        writeAt(target, 32 * MIB, rest);
        assertArrayEquals(rest, readAt(target, 32 * MIB, rest.length));
        assertArrayEquals(half, readAt(target, 0, half.length));
        rig.node.unpublish(a.id(), target);
        rig.node.unstage(a.id(), staging);
    }
}
