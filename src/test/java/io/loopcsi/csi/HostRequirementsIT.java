package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.loopcsi.engine.HostRequirements;
import io.loopcsi.testing.KernelCleanup;

/**
 * The packaged driver started on a host without mkfs.xfs (a PATH of symlinks to every command it
 * needs but that one) refuses to serve and says in one line what is missing and which package
 * brings it; the same PATH with mkfs.xfs added is enough to serve.
 */
class HostRequirementsIT {

    Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory("loopcsi-it-").toRealPath();
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir);
    }

    @Test
    void withoutMkfsXfsTheDriverRefusesToServeAndSaysWhatToInstall() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (String c : HostRequirements.COMMANDS.keySet()) {
            if (!c.equals("mkfs.xfs")) {
                Files.createSymbolicLink(bin.resolve(c), which(c));
            }
        }
        Process p = start(bin);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the driver exits");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertEquals(1, p.exitValue(), out);
        assertEquals(1, out.lines().count(), "one line: " + out);
        assertTrue(out.contains("mkfs.xfs (package xfsprogs)") && out.contains("apt-get install xfsprogs"), out);
        assertFalse(Files.exists(dir.resolve("csi.sock")), "nothing served");

        Files.createSymbolicLink(bin.resolve("mkfs.xfs"), which("mkfs.xfs"));
        Process ok = start(bin);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(dir.resolve("csi.sock")) && ok.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertTrue(Files.exists(dir.resolve("csi.sock")), "with every command present the driver serves");
        } finally {
            ok.destroy();
            ok.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private Process start(Path bin) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
                Path.of("target/quarkus-app/quarkus-run.jar").toAbsolutePath().toString(), "standalone", "--endpoint",
                "unix://" + dir.resolve("csi.sock"), "--data-dir", dir.resolve("pool").toString(), "--capacity", "1Gi")
                .redirectErrorStream(true);
        pb.environment().put("PATH", bin.toString());
        return pb.start();
    }

    private static Path which(String command) {
        for (String d : List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin")) {
            if (Files.isExecutable(Path.of(d, command))) {
                return Path.of(d, command);
            }
        }
        throw new IllegalStateException(command + " is not installed on this test machine");
    }
}
