package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import csi.v1.CapacityRange;
import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.ListSnapshotsRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.Volume;
import csi.v1.VolumeCapability;
import io.grpc.StatusRuntimeException;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.Data;
import io.loopcsi.testing.DriverProcess;
import io.loopcsi.testing.KernelCleanup;

/**
 * The packaged driver as a process: crashes (SIGKILL and armed fail points), what a reboot
 * leaves (no mounts, no loop devices), and SIGTERM. Data written through published paths must
 * come back byte for byte; no operation may leave a half volume behind.
 */
class ReliabilityIT {

    static final long MIB = 1L << 20;
    Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory("loopcsi-it-").toRealPath();
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir);
    }

    record Vol(String id, VolumeCapability cap, Path staging, Path target, String sha) {
    }

    @Test
    void rebootDrillKeepsEveryByte() throws Exception {
        List<Vol> vols = new ArrayList<>();
        try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
            for (int i = 0; i < 6; i++) {
                boolean block = i % 2 == 0;
                VolumeCapability cap = block ? Csi.block() : Csi.mount(i == 5 ? "ext4" : "xfs");
                String id = csi.controller.createVolume(Csi.create("drill-" + i, cap, block ? 64 * MIB : 300 * MIB)).getVolume()
                        .getVolumeId();
                Path staging = dir.resolve("kubelet/staging/" + i);
                Path target = dir.resolve("kubelet/pods/" + i + (block ? "/dev" : "/mnt"));
                stagePublish(csi, id, cap, staging, target);
                byte[] data = new byte[4 << 20];
                new Random(i).nextBytes(data);
                Data.writeAt(dataFile(target, block), block ? 3 * MIB : 0, data);
                vols.add(new Vol(id, cap, staging, target, Data.sha256(data)));
            }
            driver.kill();
        }
        // what a reboot leaves: no mounts, no loop devices; the pool directory is all there is
        KernelCleanup.unmountUnder(dir.resolve("kubelet").toString());
        KernelCleanup.detachUnder(dir.resolve("pool").toString());
        assertTrue(KernelCleanup.loopDevicesUnder(dir).isEmpty());

        try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
            List<Volume> listed = csi.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .map(e -> e.getVolume()).toList();
            assertEquals(vols.size(), listed.size());
            long verified = 0;
            for (Vol v : vols) {
                stagePublish(csi, v.id(), v.cap(), v.staging(), v.target());
                boolean block = v.cap().hasBlock();
                byte[] back = Data.readAt(dataFile(v.target(), block), block ? 3 * MIB : 0, 4 << 20);
                assertEquals(v.sha(), Data.sha256(back), "volume " + v.id() + " after the reboot");
                verified += 4 << 20;
            }
            assertEquals(vols.size() * (4L << 20), verified);
        }
    }

    @Test
    void sigtermAndRestartWhilePublishedDetachNothing() throws Exception {
        VolumeCapability cap = Csi.mount("xfs");
        Path staging = dir.resolve("kubelet/staging/a");
        Path target = dir.resolve("kubelet/pods/a/mnt");
        String id;
        List<String> loopsBefore;
        try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
            id = csi.controller.createVolume(Csi.create("keep", cap, 300 * MIB)).getVolume().getVolumeId();
            stagePublish(csi, id, cap, staging, target);
            Files.writeString(target.resolve("hello.txt"), "still here");
            loopsBefore = KernelCleanup.loopDevicesUnder(dir);
            int code = driver.terminate();
            assertTrue(code == 0 || code == 143, "SIGTERM is an orderly exit (143 = 128 + SIGTERM), got " + code + ":\n" + driver.log());
            assertTrue(driver.log().contains("stopped in"), driver.log());
            assertFalse(Files.exists(driver.socket), "the socket is removed at shutdown");
        }
        assertEquals(loopsBefore, KernelCleanup.loopDevicesUnder(dir), "no loop device detached");
        assertTrue(CsiTestBase.isMountPoint(staging) && CsiTestBase.isMountPoint(target), "nothing unmounted");
        assertEquals("still here", Files.readString(target.resolve("hello.txt")));

        try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
            stagePublish(csi, id, cap, staging, target); // kubelet repeats its calls: idempotent
            assertEquals(loopsBefore, KernelCleanup.loopDevicesUnder(dir));
            assertEquals("still here", Files.readString(target.resolve("hello.txt")));
        }
    }

    @Test
    void sigtermDuringASnapshotLeavesItWholeOrAbsent() throws Exception {
        try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
            String id = csi.controller.createVolume(Csi.create("busy", Csi.block(), 512 * MIB)).getVolume().getVolumeId();
            Path image = dir.resolve("pool/volumes/" + id + ".img");
            byte[] chunk = new byte[1 << 20];
            new Random(9).nextBytes(chunk);
            try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
                for (int i = 0; i < 256; i++) {
                    ch.write(ByteBuffer.wrap(chunk), i * MIB);
                }
            }
            Thread call = new Thread(() -> {
                try {
                    csi.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("busy-snap").setSourceVolumeId(id).build());
                } catch (StatusRuntimeException ignored) {
                    // aborted by the shutdown: allowed
                }
            });
            call.start();
            Thread.sleep(150);
            driver.terminate();
            call.join(60_000);
        }
        try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
            assertNoHalfObjects("sigterm during snapshot");
            int snaps = csi.controller.listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesCount();
            assertTrue(snaps <= 1);
        }
    }

    @Test
    void aCrashAtAnyStepLeavesTheOldStateOrTheNewOne() throws Exception {
        Map<String, Step> steps = new LinkedHashMap<>();
        steps.put("create.image-written", csi -> csi.controller.createVolume(Csi.create("crash-new", Csi.block(), 8 * MIB)));
        steps.put("create.image-renamed", csi -> csi.controller.createVolume(Csi.create("crash-new", Csi.block(), 8 * MIB)));
        steps.put("snapshot.image-written", csi -> csi.controller.createSnapshot(
                CreateSnapshotRequest.newBuilder().setName("crash-snap").setSourceVolumeId(baseId(csi)).build()));
        steps.put("snapshot.image-renamed", csi -> csi.controller.createSnapshot(
                CreateSnapshotRequest.newBuilder().setName("crash-snap").setSourceVolumeId(baseId(csi)).build()));
        steps.put("expand.image-grown", csi -> csi.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(baseId(csi)).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(16 * MIB)).build()));
        steps.put("delete.metadata-removed", csi -> csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder()
                .setVolumeId(baseId(csi)).build()));

        for (Map.Entry<String, Step> step : steps.entrySet()) {
            KernelCleanup.deleteTree(dir.resolve("pool"));
            try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
                csi.controller.createVolume(Csi.create("crash-base", Csi.block(), 8 * MIB));
            }
            try (DriverProcess armed = DriverProcess.start(dir, "-Dloopcsi.fail-points=" + step.getKey());
                    CsiClient csi = armed.client()) {
                assertThrows(StatusRuntimeException.class, () -> step.getValue().call(csi), step.getKey());
                assertEquals(86, armed.awaitExit(), step.getKey() + " halts the driver");
            }
            try (DriverProcess driver = DriverProcess.start(dir); CsiClient csi = driver.client()) {
                assertNoHalfObjects(step.getKey());
                step.getValue().call(csi); // the retry completes the operation
                assertNoHalfObjects(step.getKey());
                int volumes = csi.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount();
                int snapshots = csi.controller.listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesCount();
                int expected = step.getKey().startsWith("create") ? 2 : step.getKey().startsWith("delete") ? 0 : 1;
                assertEquals(expected, volumes, step.getKey());
                assertEquals(step.getKey().startsWith("snapshot") ? 1 : 0, snapshots, step.getKey());
                if (step.getKey().startsWith("expand")) {
                    assertEquals(16 * MIB, csi.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntries(0)
                            .getVolume().getCapacityBytes());
                }
            }
        }
    }

    interface Step {
        void call(CsiClient csi);
    }

    private static String baseId(CsiClient csi) {
        return csi.controller.createVolume(Csi.create("crash-base", Csi.block(), 8 * MIB)).getVolume().getVolumeId();
    }

    /** Every image has its metadata and every metadata its image; no temp files. */
    private void assertNoHalfObjects(String step) throws IOException {
        for (String sub : List.of("volumes", "snapshots")) {
            try (Stream<Path> s = Files.list(dir.resolve("pool").resolve(sub))) {
                List<String> names = s.map(p -> p.getFileName().toString()).sorted().toList();
                for (String n : names) {
                    assertFalse(n.endsWith(".tmp"), step + ": leftover " + n);
                    String base = n.substring(0, n.lastIndexOf('.'));
                    assertTrue(names.contains(base + ".img") && names.contains(base + ".json"), step + ": half object " + n);
                }
            }
        }
    }

    private static void stagePublish(CsiClient csi, String id, VolumeCapability cap, Path staging, Path target) {
        csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(cap).build());
        csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(cap).build());
    }

    private static Path dataFile(Path target, boolean block) {
        return block ? target : target.resolve("data.bin");
    }
}
