package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.VolumeContentSource;
import io.grpc.StatusRuntimeException;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.DriverProcess;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.Unprivileged;

/**
 * A tenant's data is readable by no one else on the node: the packaged driver, started under
 * umask 000 (the worst a caller can hand it), as seen by another user (nobody, no groups). The
 * socket and pool live in a directory everyone may enter, so only their own modes protect them.
 */
class SecurityIT {

    static final long MIB = 1L << 20;
    Path dir;
    Path socket;
    Path pool;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory("loopcsi-sec-").toRealPath();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        socket = dir.resolve("run/csi.sock");
        pool = dir.resolve("pool");
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir);
    }

    @Test
    void aFreshPoolUnderUmask000IsReadableAndItsSocketConnectableByNoOneElse() throws Exception {
        assertHarnessCanTellReadableFromNot();
        try (DriverProcess driver = DriverProcess.start(dir, socket, pool, "000"); CsiClient csi = driver.client()) {
            assertEquals("rwxrwxrwx", mode(socket.getParent()), "umask 000 really applied: the launcher made run/ with 0777");
            String src = csi.controller.createVolume(Csi.create("sec-src", Csi.block(), 8 * MIB)).getVolume().getVolumeId();
            String snap = csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("sec-snap").setSourceVolumeId(src)
                    .build()).getSnapshot().getSnapshotId();
            csi.controller.createVolume(fromSource("sec-restore", VolumeContentSource.newBuilder()
                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap)).build()));
            csi.controller.createVolume(fromSource("sec-clone", VolumeContentSource.newBuilder()
                    .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(src)).build()));

            assertSocketIsTheOwnersOnly();
            assertPoolIsTheOwnersOnly(3, 1);
        }
        // the temp file of a copy (cp --reflink=auto --sparse=always) is private from its first byte:
        // halt the driver right after it is written, before it is renamed
        try (DriverProcess armed = DriverProcess.start(dir, socket, pool, "000", "-Dloopcsi.fail-points=create.image-written");
                CsiClient csi = armed.client()) {
            String src = csi.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntries(0).getVolume().getVolumeId();
            assertThrows(StatusRuntimeException.class, () -> csi.controller.createVolume(fromSource("sec-halted", VolumeContentSource
                    .newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(src)).build())));
            assertEquals(86, armed.awaitExit());
        }
        Map<String, String> temps = new TreeMap<>(modes(pool));
        temps.keySet().removeIf(k -> !k.endsWith(".img.tmp"));
        assertEquals(1, temps.size(), temps.toString());
        assertEquals("rw-------", temps.values().iterator().next());
    }

    @Test
    void aPoolMadeWithTheOldModesIsTightenedWhenThisVersionStarts() throws Exception {
        try (DriverProcess driver = DriverProcess.start(dir, socket, pool, null); CsiClient csi = driver.client()) {
            String src = csi.controller.createVolume(Csi.create("old-src", Csi.block(), 8 * MIB)).getVolume().getVolumeId();
            csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("old-snap").setSourceVolumeId(src).build());
            driver.kill();
        }
        // what the earlier version left under umask 022
        for (Path p : modes(pool).keySet().stream().map(k -> pool.resolve(k.substring(1))).toList()) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
        }
        Path image;
        try (Stream<Path> s = Files.list(pool.resolve("volumes"))) {
            image = s.filter(p -> p.toString().endsWith(".img")).findFirst().orElseThrow();
        }
        assertEquals(0, Unprivileged.read(image).exit(), "the old modes let anyone read a volume");

        try (DriverProcess driver = DriverProcess.start(dir, socket, pool, null)) {
            // root, lock file, volumes/, snapshots/, image + metadata of the volume and of the snapshot
            assertTrue(driver.log().contains("pool " + pool + ": made 8 files and directories private"), driver.log());
            assertSocketIsTheOwnersOnly();
            assertPoolIsTheOwnersOnly(1, 1);
        }
    }

    private static CreateVolumeRequest fromSource(String name, VolumeContentSource source) {
        return Csi.create(name, Csi.block(), 8 * MIB).toBuilder().setVolumeContentSource(source).build();
    }

    /** nobody reads a world-readable file and connects to a world-writable socket here: a refusal below is the modes' doing. */
    private void assertHarnessCanTellReadableFromNot() throws IOException {
        Path open = Files.writeString(dir.resolve("open.txt"), "x");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        Unprivileged.Result r = Unprivileged.read(open);
        assertEquals(new Unprivileged.Result(0, "x"), r);
    }

    private void assertSocketIsTheOwnersOnly() throws IOException {
        assertEquals("rw-------", mode(socket));
        Unprivileged.Result refused = Unprivileged.connect(socket);
        // EACCES from connect(2) (the JDK reports it as a BindException)
        assertTrue(refused.exit() == 1 && refused.output().endsWith(": Permission denied"), refused.toString());
        // the same client connects once the mode allows it: the mode is what refused it
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        try {
            assertEquals(new Unprivileged.Result(0, "connected"), Unprivileged.connect(socket));
        } finally {
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        }
    }

    /** Every file 0600, every directory 0700, and nobody reads any of them, even with the directories opened to them. */
    private void assertPoolIsTheOwnersOnly(int volumes, int snapshots) throws IOException {
        Map<String, String> modes = modes(pool);
        assertEquals(4 + 2 * volumes + 2 * snapshots, modes.size(), modes.toString());
        List<Path> dirs = List.of(pool, pool.resolve("volumes"), pool.resolve("snapshots"));
        for (Map.Entry<String, String> e : modes.entrySet()) {
            Path p = pool.resolve(e.getKey().substring(1));
            assertEquals(dirs.contains(p) ? "rwx------" : "rw-------", e.getValue(), e.getKey());
        }
        for (Path p : modes.keySet().stream().map(k -> pool.resolve(k.substring(1))).filter(p -> !dirs.contains(p)).toList()) {
            assertNotEquals(0, Unprivileged.read(p).exit(), p.toString());
        }
        // defence in depth: the files alone refuse, also where someone opened the directories
        for (Path d : dirs) {
            Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        try {
            for (Path p : modes.keySet().stream().map(k -> pool.resolve(k.substring(1))).filter(p -> !dirs.contains(p)).toList()) {
                Unprivileged.Result r = Unprivileged.read(p);
                assertEquals(1, r.exit(), p + ": " + r.output());
                assertTrue(r.output().contains("Permission denied"), p + ": " + r.output());
            }
        } finally {
            for (Path d : dirs) {
                Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
            }
        }
    }

    private static Map<String, String> modes(Path root) throws IOException {
        Map<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                m.put("/" + root.relativize(p), mode(p));
            }
        }
        return m;
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }
}
