package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.GIB;
import static io.loopcsi.engine.Rig.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every file of a pool is 0600 and every directory 0700 (this JVM's umask is the usual 022, so a
 * file created without an explicit mode would show as 0644 here; SecurityIT runs the packaged
 * driver under umask 000 and reads as another user).
 */
class PoolPrivacyTest extends KernelTestDirs {

    /** Mode of every file and directory under root (root included), by path relative to root. */
    static Map<String, String> modes(Path root) throws Exception {
        Map<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                m.put("/" + root.relativize(p), PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS)));
            }
        }
        return m;
    }

    @Test
    void volumesSnapshotsRestoresClonesAndMetadataAreCreatedPrivate() throws Exception {
        Rig rig = new Rig(dir.resolve("pool"), 4 * GIB);
        VolumeMeta v = rig.block("priv-src", 8 * MIB);
        SnapshotMeta s = rig.engine.createSnapshot("priv-snap", v.id());
        rig.engine.createVolume(new CreateRequest("priv-restore", 8 * MIB, 0, VolumeMode.BLOCK, "", s.id(), null, Map.of()));
        rig.engine.createVolume(new CreateRequest("priv-clone", 16 * MIB, 0, VolumeMode.BLOCK, "", null, v.id(), Map.of()));
        rig.engine.expandVolume(v.id(), 32 * MIB, 0);

        Map<String, String> modes = modes(rig.pool.root());
        assertEquals(4 + 3 * 2 + 2, modes.size(), modes.toString()); // root, lock, 2 dirs; image + metadata of 3 volumes, 1 snapshot
        modes.forEach((path, mode) -> {
            boolean directory = Files.isDirectory(rig.pool.root().resolve(path.substring(1)));
            assertEquals(directory ? "rwx------" : "rw-------", mode, path);
        });
    }

    @Test
    void aPoolOfAnEarlierVersionIsMadePrivateWhenOpened() throws Exception {
        Path root = dir.resolve("pool");
        Rig rig = new Rig(root, 4 * GIB);
        VolumeMeta v = rig.block("old-src", 8 * MIB);
        rig.engine.createSnapshot("old-snap", v.id());
        rig.pool.lock().close();
        // what the earlier version left (umask 022): 0644 files, 0755 directories, and a torn temp file
        Files.writeString(root.resolve("volumes").resolve(v.id() + ".json.tmp"), "{");
        Files.createSymbolicLink(root.resolve("volumes").resolve("elsewhere"), Path.of("/etc/hostname"));
        String hostnameBefore = PosixFilePermissions.toString(Files.getPosixFilePermissions(Path.of("/etc/hostname")));
        for (Map.Entry<String, String> e : modes(root).entrySet()) {
            Path p = root.resolve(e.getKey().substring(1));
            if (!Files.isSymbolicLink(p)) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
        // root, lock file, volumes/, snapshots/, 2 + 1 volume files, 2 snapshot files
        assertEquals(9, PoolModes.tighten(root));
        assertEquals(0, PoolModes.tighten(root), "nothing left to fix");
        Map<String, String> modes = modes(root);
        modes.forEach((path, mode) -> {
            Path p = root.resolve(path.substring(1));
            if (!Files.isSymbolicLink(p)) {
                assertEquals(Files.isDirectory(p) ? "rwx------" : "rw-------", mode, path);
            }
        });
        assertEquals(hostnameBefore, PosixFilePermissions.toString(Files.getPosixFilePermissions(Path.of("/etc/hostname"))),
                "a symbolic link in the pool is never followed");

        // opening the pool does the same, and the volumes are all there
        for (String sub : List.of("", "volumes")) {
            Files.setPosixFilePermissions(root.resolve(sub), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        PoolDirectory reopened = new PoolDirectory(root);
        assertEquals("rwx------", modes(root).get("/"));
        assertEquals("rwx------", modes(root).get("/volumes"));
        assertEquals(List.of(v.id()), reopened.listVolumes().stream().map(VolumeMeta::id).toList());
        assertTrue(Files.exists(reopened.volumeImage(v.id())));
    }
}
