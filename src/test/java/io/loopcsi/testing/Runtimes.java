package io.loopcsi.testing;

import java.nio.file.Path;

/**
 * Which build the process tests start through the launcher: the JVM's (target/quarkus-app), or with
 * LOOPCSI_RUNTIME=native in the environment (or -Dloopcsi.runtime=native) the native executable of
 * `make native` (target/native/), which ./loopcsi then runs itself. `make test-native` runs the
 * launcher's tests that way.
 */
public final class Runtimes {

    private Runtimes() {
    }

    public static boolean isNative() {
        String r = System.getProperty("loopcsi.runtime", System.getenv().getOrDefault("LOOPCSI_RUNTIME", "jvm"));
        return r.equals("native");
    }

    /** The launcher script at the repository root, as its users run it. */
    public static Path launcher() {
        return Path.of("loopcsi").toAbsolutePath();
    }

    /** Fails unless the build the tests are to run is there. */
    public static void requireBuilt() {
        if (isNative()) {
            try (var files = java.nio.file.Files.list(Path.of("target/native"))) {
                if (files.noneMatch(f -> f.getFileName().toString().endsWith("-runner"))) {
                    throw new IllegalStateException("no native executable in target/native: make native");
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException("no target/native: make native", e);
            }
        } else if (!java.nio.file.Files.exists(Path.of("target/quarkus-app/quarkus-run.jar"))) {
            throw new IllegalStateException("target/quarkus-app is missing: process tests run after `package` (mvn verify)");
        }
    }
}
