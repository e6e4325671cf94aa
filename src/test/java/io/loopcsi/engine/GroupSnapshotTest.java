package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/** Group snapshots of mounted xfs volumes on real loop devices: frozen together, restored together, thawed always. */
class GroupSnapshotTest extends KernelTestDirs {

    private Rig rig;

    @BeforeEach
    void setUp() {
        rig = new Rig(dir.resolve("pool"), 64 * Rig.GIB);
    }

    private Path mounted(VolumeMeta v) {
        Path staging = dir.resolve("staging").resolve(v.name());
        Path target = dir.resolve("pods").resolve(v.name());
        rig.node.stage(v.id(), staging, v.mode(), v.fsType(), List.of(), false);
        rig.node.publish(v.id(), staging, target, v.mode(), v.fsType(), List.of(), false);
        return target;
    }

    @Test
    void aGroupSnapshotOfTwoMountedVolumesRestoresBothWithTheirData() throws Exception {
        VolumeMeta db = rig.fs("pvc-db", "xfs", 300 * MIB);
        VolumeMeta wal = rig.fs("pvc-wal", "xfs", 300 * MIB);
        Path dbDir = mounted(db);
        Path walDir = mounted(wal);
        Files.writeString(dbDir.resolve("table"), "row 1");
        Files.writeString(walDir.resolve("log"), "commit 1");

        GroupSnapshotMeta g = rig.engine.createGroupSnapshot("backup-1", List.of(wal.id(), db.id()));
        Files.writeString(dbDir.resolve("table"), "row 2"); // after the snapshot: writable again, and not in it
        Files.writeString(walDir.resolve("log"), "commit 2");

        assertEquals(List.of(db.id(), wal.id()).stream().sorted().toList(), g.sourceVolumeIds());
        assertEquals(g, rig.engine.createGroupSnapshot("backup-1", List.of(db.id(), wal.id())), "idempotent by name");
        expect(Kind.ALREADY_EXISTS, () -> rig.engine.createGroupSnapshot("backup-1", List.of(db.id())));
        assertEquals(g, rig.engine.groupSnapshot(g.id()).orElseThrow());
        PoolDirectory fromDisk = new PoolDirectory(dir.resolve("pool"));
        assertEquals(g, fromDisk.readGroupSnapshot(g.id()).orElseThrow(), "committed: read back from disk");
        assertEquals(g.id(), fromDisk.readSnapshot(g.snapshotIds().get(0)).orElseThrow().groupSnapshotId());

        for (String member : g.snapshotIds()) {
            SnapshotMeta s = rig.engine.snapshot(member).orElseThrow();
            assertEquals(g.id(), s.groupSnapshotId());
            VolumeMeta restored = rig.engine.createVolume(new CreateRequest("restore-" + member, 0, 0, VolumeMode.FILESYSTEM, "xfs",
                    member, null, Map.of()));
            Path r = mounted(restored);
            if (s.sourceVolumeId().equals(db.id())) {
                assertEquals("row 1", Files.readString(r.resolve("table")));
            } else {
                assertEquals("commit 1", Files.readString(r.resolve("log")));
            }
        }

        expect(Kind.INVALID_ARGUMENT, () -> rig.engine.deleteGroupSnapshot(g.id(), List.of(g.snapshotIds().get(0))));
        expect(Kind.FAILED_PRECONDITION, () -> rig.engine.deleteSnapshot(g.snapshotIds().get(0)));
        assertTrue(rig.engine.snapshot(g.snapshotIds().get(0)).isPresent(), "a member is not deleted alone");
        rig.engine.deleteGroupSnapshot(g.id(), g.snapshotIds());
        assertTrue(rig.engine.groupSnapshot(g.id()).isEmpty());
        g.snapshotIds().forEach(m -> assertTrue(rig.engine.snapshot(m).isEmpty(), "member " + m + " deleted with its group"));
        rig.engine.deleteGroupSnapshot(g.id(), g.snapshotIds()); // idempotent
    }

    @Test
    void aFailedGroupSnapshotThawsEveryFrozenMemberAndCommitsNothing() throws Exception {
        VolumeMeta a = rig.fs("pvc-a", "xfs", 300 * MIB);
        VolumeMeta broken = rig.block("pvc-broken", 8 * MIB);
        Path aDir = mounted(a);
        Files.delete(rig.image(broken)); // its copy fails while pvc-a is frozen

        expect(Kind.INTERNAL, () -> rig.engine.createGroupSnapshot("doomed", List.of(a.id(), broken.id())));

        // a frozen filesystem would block this write until thawed
        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
            try {
                Files.writeString(aDir.resolve("still-writable"), "yes");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        write.get(20, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.engine.snapshots());
        assertTrue(rig.engine.groupSnapshot(Ids.groupSnapshotIdFor("doomed")).isEmpty());
        assertFalse(rig.engine.capacity().allocatedBytes() > 308 * MIB, "nothing stays reserved");
    }
}
