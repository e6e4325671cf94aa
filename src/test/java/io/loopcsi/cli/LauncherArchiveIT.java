package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.loopcsi.testing.Launcher;
import io.loopcsi.testing.Runtimes;

/**
 * The launcher's class-data archive of the roles (`roles-*.jsa` before JDK 25, `roles-*.aot` from
 * 25): the first start that serves records it, the next start takes the finished recording into
 * place. Two roles started at once (a node and a controller on one machine, the tests'
 * TwoNodePool) both found the same finished recording, both moved it, and the second `mv` failed
 * the start under `set -e`: "mv: cannot stat 'roles-....jsa.PID'". Runs the packaged launcher on a
 * copy of the application (LOOPCSI_APP), so the build's own archive is left alone.
 */
class LauncherArchiveIT {

    @TempDir
    Path dir;

    @Test
    void twoRolesStartedAtOnceBothServeAndOneTakesTheRecordedArchive() throws Exception {
        assumeFalse(Runtimes.isNative(), "the archive is the JVM runtime's");
        Path app = dir.resolve("app");
        copyApp(Path.of("target/quarkus-app"), app);
        Map<String, String> env = Map.of("LOOPCSI_APP", app.toString());

        try (Launcher first = standalone("first", env)) {
            first.awaitCsi(socket("first"));
            first.stop(); // the recording is written as the JVM exits
        }
        List<String> recorded = archives(app);
        assertTrue(recorded.size() == 2 && recorded.stream().anyMatch(f -> f.matches("roles-\\d+\\.(jsa|aot)\\.\\d+")),
                "a finished recording and its mark: " + recorded);

        try (Launcher a = standalone("a", env); Launcher b = standalone("b", env)) {
            a.awaitCsi(socket("a")); // fails, with its log, when its launcher exited
            b.awaitCsi(socket("b"));
        }
        List<String> after = archives(app);
        assertEquals(1, after.size(), "the recording taken into place, nothing left beside it: " + after);
        assertTrue(after.get(0).matches("roles-\\d+\\.(jsa|aot)"), after.toString());
    }

    private Path socket(String name) {
        return dir.resolve(name + ".sock");
    }

    /** A standalone driver started by the launcher, not waited for. */
    private Launcher standalone(String name, Map<String, String> env) throws Exception {
        return Launcher.start(dir, name, List.of("standalone", "--endpoint", "unix://" + socket(name), "--data-dir",
                dir.resolve(name + "-pool").toString(), "--capacity", "1Gi", "--node-id", name), env);
    }

    private static List<String> archives(Path app) throws Exception {
        try (Stream<Path> files = Files.list(app)) {
            return files.map(f -> f.getFileName().toString()).filter(f -> f.startsWith("roles-")).sorted().toList();
        }
    }

    /** The application without the build's own recordings. */
    private static void copyApp(Path from, Path to) throws Exception {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else if (!p.getFileName().toString().startsWith("roles-")) {
                    Files.copy(p, target);
                }
            }
        }
    }
}
