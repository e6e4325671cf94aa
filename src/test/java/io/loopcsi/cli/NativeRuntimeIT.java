package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.loopcsi.testing.Runtimes;

/**
 * The launcher's LOOPCSI_RUNTIME=native: it runs the native executable with the arguments it was
 * given, says in one line to `make native` when there is none, and under a cgroup memory limit gives
 * the executable (which does not read cgroups) a heap of 75% of it. A stand-in executable that prints
 * its arguments shows what the launcher passes; the real one (make test-native) is checked for the
 * runtime it reports.
 */
class NativeRuntimeIT {

    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {
    }

    private Run launcher(Map<String, String> env, String... args) throws Exception {
        return launcher(null, env, args);
    }

    /** ./loopcsi ARGS with env, in the memory cgroup dir (v1) when not null. */
    private Run launcher(Path cgroup, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (cgroup != null) {
            cmd.addAll(List.of("sh", "-c", "echo $$ > " + cgroup.resolve("cgroup.procs") + " && exec \"$0\" \"$@\""));
        }
        cmd.addAll(List.of("bash", Runtimes.launcher().toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("LOOPCSI_NATIVE_OPTS");
        pb.environment().putAll(env);
        Path out = dir.resolve("out");
        Path err = dir.resolve("err");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private Path standIn() throws Exception {
        Path exe = dir.resolve("loopcsi-0.1.0-runner");
        Files.writeString(exe, "#!/bin/sh\necho \"$@\"\n");
        exe.toFile().setExecutable(true);
        return exe;
    }

    @Test
    void withoutANativeExecutableItSaysMakeNativeInOneLine() throws Exception {
        Run r = launcher(Map.of("LOOPCSI_RUNTIME", "native", "LOOPCSI_NATIVE", dir.resolve("none").toString()), "--version");
        assertEquals(1, r.exit());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("loopcsi: LOOPCSI_RUNTIME=native but no native executable in ") && r.err().contains("run 'make native' first"),
                r.err());

        Run bad = launcher(Map.of("LOOPCSI_RUNTIME", "graal"), "--version");
        assertEquals(64, bad.exit());
        assertEquals("loopcsi: LOOPCSI_RUNTIME must be jvm or native, not 'graal'", bad.err().strip());
    }

    @Test
    void itRunsTheExecutableWithTheArgumentsAndNoHeapSizeWithoutALimit() throws Exception {
        Run r = launcher(Map.of("LOOPCSI_RUNTIME", "native", "LOOPCSI_NATIVE", standIn().toString()), "node", "--pool", "p");
        assertEquals(0, r.exit(), r.err());
        // this test's own cgroup has no memory limit below the machine's memory
        assertEquals("node --pool p", r.out().strip());
        Run opts = launcher(Map.of("LOOPCSI_RUNTIME", "native", "LOOPCSI_NATIVE", standIn().toString(), "LOOPCSI_NATIVE_OPTS", "-Dx=1"),
                "doctor");
        assertEquals("-Dx=1 doctor", opts.out().strip());
    }

    @Test
    void underAMemoryLimitTheHeapIsThreeQuartersOfIt() throws Exception {
        Path memory = Path.of("/sys/fs/cgroup/memory");
        Assumptions.assumeTrue(Files.isWritable(memory), "no writable cgroup v1 memory hierarchy (the kubelet's cgroupfs on these machines)");
        Path cg = Files.createDirectory(memory.resolve("loopcsi-native-it-" + ProcessHandle.current().pid()));
        try {
            Files.writeString(cg.resolve("memory.limit_in_bytes"), String.valueOf(256L << 20));
            Map<String, String> env = Map.of("LOOPCSI_RUNTIME", "native", "LOOPCSI_NATIVE", standIn().toString());
            assertEquals("-Xmx192m node --pool p", launcher(cg, env, "node", "--pool", "p").out().strip());
            // an explicit heap size wins
            Map<String, String> given = new java.util.HashMap<>(env);
            given.put("LOOPCSI_NATIVE_OPTS", "-Xmx100m");
            assertEquals("-Xmx100m node", launcher(cg, given, "node").out().strip());
        } finally {
            Files.delete(cg);
        }
    }

    @Test
    void theNativeExecutableSaysItIsNative() throws Exception {
        Assumptions.assumeTrue(Runtimes.isNative(), "LOOPCSI_RUNTIME=native not set (make test-native)");
        Run r = launcher(Map.of(), "--version");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\nruntime native\n"), r.out());
        assertEquals("", r.err(), "nothing on stderr");
    }
}
