package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import csi.v1.ListVolumesRequest;
import io.loopcsi.engine.PoolLock;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.DriverProcess;
import io.loopcsi.testing.KernelCleanup;

/**
 * One pool directory, one owner, between processes: a second packaged driver on the same
 * --data-dir is refused (one line, exit 1) while the first runs, and starts once the first is
 * killed with -9 (the kernel drops the lock: none is ever stale). The waiting mode (the node
 * role's) takes the lock as soon as the holder is gone, and gives up at its bound.
 */
class PoolLockIT {

    static final long MIB = 1L << 20;
    Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory("loopcsi-lock-").toRealPath();
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir);
    }

    @Test
    void aSecondDriverOnOnePoolIsRefusedUntilTheFirstIsKilled() throws Exception {
        Path pool = dir.resolve("pool");
        Path second = dir.resolve("b.sock");
        String volumeId;
        try (DriverProcess first = DriverProcess.start(dir, dir.resolve("a.sock"), pool, null); CsiClient csi = first.client()) {
            volumeId = csi.controller.createVolume(Csi.create("lock-a", Csi.block(), 8 * MIB)).getVolume().getVolumeId();

            DriverProcess.Exit refused = DriverProcess.runToExit(second, pool);
            assertEquals(1, refused.code(), refused.output());
            String line = refused.output().strip();
            assertEquals(1, line.lines().count(), "one line, no stack trace: " + refused.output());
            assertEquals("loopcsi: pool directory " + pool + " is in use by PID " + first.pid() + "; one pool directory serves one "
                    + "loopcsi process: stop the other one, or give this one another --data-dir", line);
            assertFalse(Files.exists(second), "the refused driver never served");

            // the node role's way: wait with a bound, saying so
            List<String> said = new CopyOnWriteArrayList<>();
            PoolLock.Locked late = assertThrows(PoolLock.Locked.class, () -> PoolLock.acquire(pool, Duration.ofSeconds(1), said::add));
            assertTrue(late.getMessage().contains("PID " + first.pid()) && late.getMessage().contains("not released in time"),
                    late.getMessage());
            assertTrue(!said.isEmpty() && said.get(0).contains("locked by PID " + first.pid()) && said.get(0).contains("waiting"),
                    said.toString());

            said.clear();
            CompletableFuture<PoolLock> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return PoolLock.acquire(pool, Duration.ofSeconds(60), said::add);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(1000);
            assertFalse(waiter.isDone(), "waits while the first driver runs");
            first.kill(); // SIGKILL: no shutdown hook, no unlock; the kernel releases the lock
            long killed = System.nanoTime();
            try (PoolLock taken = waiter.get(15, TimeUnit.SECONDS)) {
                assertEquals(pool, taken.dir());
                assertTrue(System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(5), "taken within a poll of the release");
            }
            assertTrue(said.get(said.size() - 1).contains("lock taken after waiting"), said.toString());
        }

        try (DriverProcess again = DriverProcess.start(dir, second, pool, null); CsiClient csi = again.client()) {
            assertEquals(List.of(volumeId), csi.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .map(e -> e.getVolume().getVolumeId()).toList(), "the same pool, served by the new driver");
        }
    }
}
