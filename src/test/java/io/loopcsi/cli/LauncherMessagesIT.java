package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.Launcher;
import io.loopcsi.testing.Runtimes;

/**
 * The packaged launcher speaks to people: a bad flag value of any role is one line naming the flag
 * (exit 64), a start that fails is one line naming what failed (exit 1) and a stack trace only with
 * --debug, and --version says what is running. FlagsTest checks every flag's value; this runs one
 * per role through ./loopcsi.
 */
class LauncherMessagesIT {

    Path dir;

    @BeforeEach
    void makeDir() throws Exception {
        dir = java.nio.file.Files.createTempDirectory("loopcsi-msg-it-").toRealPath();
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir);
    }

    @Test
    void aBadValueOfAnyRoleIsOneLineNamingTheFlagAndExit64() throws Exception {
        assertOneLine(64, "loopcsi: --capacity: not a size: 'abc' (use e.g. 20Gi, 500Mi or bytes)", "standalone", "--capacity", "abc");
        assertOneLine(64, "loopcsi: --http-address: not HOST:PORT: 'nope' (e.g. 0.0.0.0:8080)", "controller", "--pool", "p",
                "--http-address", "nope");
        assertOneLine(64, "loopcsi: --node-name: not a Kubernetes name (lower-case letters, digits, '-' and '.', alphanumeric at both"
                + " ends): 'Node_1'", "node", "--pool", "p", "--node-name", "Node_1");
        assertOneLine(64, "loopcsi: --namespace: not a namespace name (lower-case letters, digits and '-', alphanumeric at both ends):"
                + " 'my.ns'", "operator", "--namespace=my.ns");
        assertOneLine(64, "loopcsi: --format: 'yaml' is not one of table, json", "doctor", "--format", "yaml");
    }

    @Test
    void aStartThatFailsIsOneLineNamingWhatFailedAndExit1() throws Exception {
        Launcher.Result r = assertOneLine(1, null, "standalone", "--endpoint", "unix://" + dir.resolve("csi.sock"), "--data-dir", "/proc/nope");
        assertTrue(r.out().startsWith("loopcsi: cannot make pool directory /proc/nope: ") && r.out().contains("choose another --data-dir"),
                r.out());

        // a failure inside Quarkus' start: the CSI port is taken
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String endpoint = "tcp://127.0.0.1:" + taken.getLocalPort();
            List<String> args = List.of("standalone", "--endpoint", endpoint, "--data-dir", dir.resolve("pool").toString(), "--capacity", "1Gi");
            r = assertOneLine(1, null, args.toArray(String[]::new));
            assertEquals("loopcsi: cannot start: address already in use by another process: --endpoint " + endpoint
                    + " (stop the other process or choose another address) (--debug shows the stack trace)", r.out().strip());

            List<String> debug = new java.util.ArrayList<>(args);
            debug.add("--debug");
            Launcher.Result d = Launcher.run(debug.toArray(String[]::new));
            assertEquals(1, d.exit(), d.out());
            assertTrue(d.out().contains("\tat ") && d.out().contains("Address already in use"), "--debug: the stack trace\n" + d.out());
        }
    }

    @Test
    void versionNamesTheDriverTheSpecTheRuntimeAndTheCommit() throws Exception {
        Launcher.Result v = Launcher.run("--version");
        assertEquals(0, v.exit(), v.out());
        // the native executable carries the JDK it was built with, not this test's
        String jdk = Runtimes.isNative() ? "\\S+" : java.util.regex.Pattern.quote(System.getProperty("java.version"));
        assertTrue(v.out().matches("loopcsi 0\\.1\\.0\nCSI spec 1\\.12\\.0\nQuarkus 3\\.\\d+\\.\\d+\nJDK " + jdk + " \\(.*\\)\nruntime "
                + (Runtimes.isNative() ? "native" : "JVM") + "\ncommit [0-9a-f]{12}.*\n"), v.out());
        Launcher.Result csc = Launcher.run("csc", "--version");
        assertEquals(0, csc.exit(), csc.out());
        assertEquals(v.out(), csc.out(), "loopcsi csc --version says the same");
    }

    /** Runs ./loopcsi ARGS: its exit status and what it wrote on stderr is one line (returned), and no stack trace anywhere. */
    private static Launcher.Result assertOneLine(int exit, String line, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("/bin/bash", Path.of("loopcsi").toAbsolutePath().toString()));
        cmd.addAll(List.of(args));
        Path out = java.nio.file.Files.createTempFile("loopcsi-out", ".txt");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).start();
            String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
            String stdout = java.nio.file.Files.readString(out);
            assertEquals(exit, p.exitValue(), err + stdout);
            assertEquals(1, err.lines().count(), "one line on stderr:\n" + err);
            assertFalse((err + stdout).contains("\tat "), err + stdout);
            if (line != null) {
                assertEquals(line, err.strip());
            }
            return new Launcher.Result(p.exitValue(), err);
        } finally {
            java.nio.file.Files.deleteIfExists(out);
        }
    }
}
