package io.loopcsi.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * Runs the application under test as a standalone driver on a unix socket in a fresh temp
 * directory, with its pool beside it; removes mounts, loop devices and files afterwards.
 * Tests find the paths through {@link #dir()}.
 */
public class StandaloneDriverResource implements QuarkusTestResourceLifecycleManager {

    private static volatile Path dir;

    public static Path dir() {
        return dir;
    }

    public static Path socket() {
        return dir.resolve("csi.sock");
    }

    @Override
    public Map<String, String> start() {
        try {
            dir = Files.createTempDirectory("loopcsi-test-").toRealPath();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        // as the launcher sets them (cli.Main.csiProperties): csi.CsiServer serves the socket
        return Map.of(
                "quarkus.http.host-enabled", "false",
                "quarkus.http.domain-socket-enabled", "false",
                "loopcsi.data-dir", dir.resolve("pool").toString(),
                "loopcsi.capacity", "40Gi",
                "loopcsi.node-id", "test-node",
                "loopcsi.allowed-roots", dir.toString(),
                "loopcsi.endpoint", "unix://" + socket());
    }

    @Override
    public void stop() {
        if (dir != null) {
            KernelCleanup.releaseAndDelete(dir);
        }
    }
}
