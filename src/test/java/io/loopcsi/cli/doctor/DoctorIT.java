package io.loopcsi.cli.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.loopcsi.engine.HostRequirements;
import io.loopcsi.testing.KernelCleanup;

/**
 * {@code ./loopcsi doctor} as a user runs it, on real filesystems: an xfs with reflinks (this
 * machine can host a pool: exit 0, every check ok), a tmpfs (no reflinks, in memory: warnings with
 * their fixes, still exit 0), and a PATH without mkfs.xfs (FAIL with the package to install, exit 1).
 */
class DoctorIT {

    Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory("loopcsi-doctor-it-").toRealPath();
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir); // unmounts the test filesystems, detaches their loop devices
    }

    @Test
    void onAnXfsWithReflinksThisMachineCanHostAPool() throws Exception {
        Path mnt = Files.createDirectories(dir.resolve("xfs"));
        Path img = dir.resolve("xfs.img");
        try (var f = new java.io.RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(512L << 20);
        }
        sh("mkfs.xfs", "-q", "-m", "reflink=1", img.toString());
        sh("mount", "-o", "loop", img.toString(), mnt.toString());

        Result r = doctor(Map.of(), "--data-dir", mnt.resolve("pool").toString(), "--capacity", "100Mi", "--format", "json");
        assertEquals(0, r.exit, r.out);
        JsonNode json = new ObjectMapper().readTree(r.out);
        assertTrue(json.get("ready").asBoolean(), r.out);
        List<String> checks = new ArrayList<>();
        for (JsonNode c : json.get("checks")) {
            checks.add(c.get("check").asText());
            // not in a pod; no node role has audited this new pool directory
            String expected = List.of("kubelet mounts", "orphans").contains(c.get("check").asText()) ? "skip" : "ok";
            assertEquals(expected, c.get("result").asText(), c.toString());
        }
        for (String c : HostRequirements.COMMANDS.keySet()) {
            assertTrue(checks.contains("command " + c), c);
        }
        assertTrue(checks.containsAll(List.of("privileges", "loop devices", "data dir", "sparse files", "reflinks", "direct I/O",
                "free space", "mkfs.xfs 300 MiB")), checks.toString());
        // reflinked files on xfs are aligned to its 4 KiB blocks for direct I/O: the pool's volumes get 4096-byte sectors
        String dio = json.get("checks").findValues("detail").get(checks.indexOf("direct I/O")).asText();
        assertTrue(dio.contains("needs 4096-byte sectors") && dio.contains("reflinks"), dio);
        assertEquals(List.of(), list(mnt), "doctor leaves nothing behind and does not make the pool directory");
    }

    @Test
    void onATmpfsTheMissingReflinksAreAWarningWithItsFix() throws Exception {
        Path mnt = Files.createDirectories(dir.resolve("tmpfs"));
        sh("mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", mnt.toString());

        Result r = doctor(Map.of(), "--data-dir", mnt.toString(), "--capacity", "512Mi");
        assertEquals(0, r.exit, "warnings do not fail:\n" + r.out);
        List<String> lines = r.out.lines().toList();
        int reflinks = index(lines, "reflinks ");
        assertTrue(lines.get(reflinks).matches("reflinks +warn +no reflinks here .*full copies.*"), r.out);
        assertTrue(lines.get(reflinks + 1).strip().startsWith("fix: for instant snapshots put --data-dir on xfs"), r.out);
        assertTrue(lines.get(index(lines, "data dir ")).contains("tmpfs"), r.out);
        assertTrue(lines.get(index(lines, "sparse files ")).matches("sparse files +ok .*"), r.out);
        assertTrue(r.out.contains("verdict: this machine can host a pool in " + mnt + "; 2 warning(s)"), r.out);
        assertEquals(List.of(), list(mnt), "doctor leaves nothing behind");
    }

    @Test
    void withoutMkfsXfsOnThePathItFailsAndSaysWhatToInstall() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (String c : HostRequirements.COMMANDS.keySet()) {
            if (!c.equals("mkfs.xfs")) {
                Files.createSymbolicLink(bin.resolve(c), which(c));
            }
        }
        Files.createSymbolicLink(bin.resolve("dirname"), which("dirname")); // the launcher script's own needs
        Result r = doctor(Map.of("PATH", bin.toString()), "--data-dir", dir.resolve("pool").toString(), "--capacity", "1Gi");
        assertEquals(1, r.exit, r.out);
        List<String> lines = r.out.lines().toList();
        int mkfs = index(lines, "command mkfs.xfs ");
        assertTrue(lines.get(mkfs).matches("command mkfs.xfs +FAIL +not on PATH .*"), r.out);
        assertEquals("fix: apt-get install xfsprogs", lines.get(mkfs + 1).strip());
        assertTrue(lines.get(index(lines, "command mkfs.ext4 ")).matches("command mkfs.ext4 +ok .*"), r.out);
        assertTrue(lines.get(index(lines, "mkfs.xfs 300 MiB ")).matches("mkfs.xfs 300 MiB +skip .*"), r.out);
        assertTrue(r.out.strip().endsWith("(1 failed: command mkfs.xfs)") || r.out.contains("(1 failed: command mkfs.xfs);"), r.out);
    }

    record Result(int exit, String out) {
    }

    /** ./loopcsi doctor ARGS with env added, to its end. */
    Result doctor(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/bin/bash", Path.of("loopcsi").toAbsolutePath().toString(), "doctor"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        return new Result(p.exitValue(), out);
    }

    static int index(List<String> lines, String prefix) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                return i;
            }
        }
        throw new AssertionError("no line starting with '" + prefix + "' in\n" + String.join("\n", lines));
    }

    static List<String> list(Path d) throws IOException {
        try (var s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("lost+found")).toList();
        }
    }

    static void sh(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + ": " + out);
        }
    }

    static Path which(String command) {
        for (String d : List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin")) {
            if (Files.isExecutable(Path.of(d, command))) {
                return Path.of(d, command);
            }
        }
        throw new IllegalStateException(command + " is not installed on this test machine");
    }
}
