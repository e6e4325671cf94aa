package io.loopcsi.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class LoopDevicesTest extends KernelTestDirs {

    /**
     * What a restarted node plugin meets (found on a real kubelet): the previous container
     * attached the volume through its bind mount of the pool directory, which is gone with its
     * mount namespace, so the kernel names the backing file "/volumes/vol-1.img". The new process
     * must find that device (and never attach the file a second time).
     */
    @Test
    void aDeviceAttachedThroughAMountThatIsGoneIsFoundByTheFilesInode() throws Exception {
        Path pool = Files.createDirectories(dir.resolve("pool/volumes")).getParent();
        Path image = pool.resolve("volumes/vol-1.img");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(16L << 20);
        }
        Path mnt = Files.createDirectories(dir.resolve("container-view"));
        Process p = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sh", "-c",
                "mount --bind \"$0\" \"$1\" && losetup --find --show \"$1/volumes/vol-1.img\"", pool.toString(), mnt.toString())
                .redirectErrorStream(true).start();
        String device = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor(30, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), device);
        try {
            String named = Files.readString(Path.of("/sys/block", Path.of(device).getFileName().toString(), "loop/backing_file")).strip();
            assertNotEquals(image.toString(), named, "the kernel names the file by the vanished mount");

            LoopDevices loops = new LoopDevices(Rig.RUNNER);
            assertEquals(Optional.of(device), loops.find(image));
            assertEquals(device, loops.findOrAttach(image, false), "no second device on the same file");
        } finally {
            Rig.RUNNER.exec("losetup", "--detach", device);
        }
    }
}
