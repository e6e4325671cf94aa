package io.loopcsi.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pool lock within one process (PoolLockIT: between processes, kill -9 included). A second
 * holder in the same process is refused as another process would be.
 */
class PoolLockTest {

    @TempDir
    Path tmp;

    @AfterEach
    void release() {
        PoolLock.releaseAllUnder(tmp);
    }

    @Test
    void theHolderWritesItsPidIntoAPrivateLockFileInAPrivateDirectory() throws Exception {
        Path pool = tmp.resolve("a/pool");
        try (PoolLock lock = PoolLock.acquire(pool)) {
            assertEquals(pool.toRealPath(), lock.dir());
            Path file = pool.resolve(PoolLock.FILE);
            assertEquals(Long.toString(ProcessHandle.current().pid()), Files.readString(file).strip());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(pool)));
        }
    }

    @Test
    void aSecondAcquisitionIsRefusedWithWhoHoldsItAndWhatToDo() {
        Path pool = tmp.resolve("pool");
        PoolLock first = PoolLock.acquire(pool);
        PoolLock.Locked e = assertThrows(PoolLock.Locked.class, () -> PoolLock.acquire(pool));
        assertTrue(e.getMessage().contains(first.dir().toString()) && e.getMessage().contains("this process")
                && e.getMessage().contains("--data-dir"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line");
        // a PoolDirectory made in the process that holds the lock works under it
        assertSame(first, new PoolDirectory(pool).lock());
        first.close();
        try (PoolLock again = PoolLock.acquire(pool)) {
            assertEquals(first.dir(), again.dir());
        }
    }

    @Test
    void aPoolDirectoryDeletedAndMadeAgainIsANewPool() throws Exception {
        Path pool = tmp.resolve("pool");
        PoolLock.acquire(pool); // never closed: its directory is deleted under it
        Files.delete(pool.resolve(PoolLock.FILE));
        Files.delete(pool);
        Files.createDirectory(pool); // may well get the same inode back
        try (PoolLock fresh = PoolLock.acquire(pool)) {
            assertEquals(fresh, PoolLock.held(pool).orElseThrow());
        }
    }

    @Test
    void oneDirectoryReachedByTwoPathsIsOnePool() throws Exception {
        Path pool = tmp.resolve("pool");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), pool.getFileName());
        try (PoolLock lock = PoolLock.acquire(pool)) {
            assertSame(lock, PoolLock.held(link).orElseThrow());
            assertThrows(PoolLock.Locked.class, () -> PoolLock.acquire(link));
        }
    }

    @Test
    void theWaitingModeTakesTheLockOnceItIsReleasedAndSaysItWaits() throws Exception {
        Path pool = tmp.resolve("pool");
        PoolLock held = PoolLock.acquire(pool);
        List<String> said = new CopyOnWriteArrayList<>();
        CompletableFuture<PoolLock> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return PoolLock.acquire(pool, Duration.ofSeconds(30), said::add);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(700);
        assertFalse(waiter.isDone(), "waits while the lock is held");
        assertTrue(said.size() == 1 && said.get(0).contains("waiting") && said.get(0).contains(pool.toRealPath().toString()), said.toString());
        held.close();
        try (PoolLock taken = waiter.get(10, TimeUnit.SECONDS)) {
            assertEquals(pool.toRealPath(), taken.dir());
        }
        assertTrue(said.get(said.size() - 1).contains("lock taken after waiting"), said.toString());
    }

    @Test
    void theWaitingModeGivesUpAtItsBound() throws Exception {
        Path pool = tmp.resolve("pool");
        PoolLock.acquire(pool);
        long start = System.nanoTime();
        PoolLock.Locked e = assertThrows(PoolLock.Locked.class, () -> PoolLock.acquire(pool, Duration.ofMillis(500), s -> { }));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMillis >= 450 && tookMillis < 5000, tookMillis + " ms");
        assertTrue(e.getMessage().contains("not released in time"), e.getMessage());
    }

    @Test
    void aDirectorySharedByEveryoneIsNeverMadeAPool() throws Exception {
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        Rig.RUNNER.run("chmod", "+t", shared.toString());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> PoolLock.acquire(shared));
        assertTrue(e.getMessage().contains("sticky bit") && e.getMessage().contains("directory of its own"), e.getMessage());
        assertEquals("rwxrwxrwx", PosixFilePermissions.toString(Files.getPosixFilePermissions(shared)), "left as it was");
        assertFalse(Files.exists(shared.resolve(PoolLock.FILE)));
    }
}
