package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

/** One operation per volume at a time: a second one is ABORTED and changes nothing; other volumes go on. */
class VolumeLocksTest extends KernelTestDirs {

    /** Runs call on another thread (the lock is reentrant for its holder) and rethrows what it threw. */
    private static void onAnotherThread(Runnable call) throws Throwable {
        var t = Executors.newSingleThreadExecutor();
        try {
            t.submit(call).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause();
        } finally {
            t.shutdownNow();
        }
    }

    @Test
    void aCallOnABusyVolumeIsAbortedAndOthersProceed() throws Throwable {
        Rig r = new Rig(dir.resolve("pool"), 4 * Rig.GIB);
        VolumeMeta busy = r.block("busy", 8 * MIB);
        VolumeMeta free = r.block("free", 8 * MIB);
        try (VolumeLocks.Held held = r.locks.tryAcquire(busy.id())) { // an operation in flight on "busy"
            EngineException e = expect(Kind.ABORTED, () -> onAnotherThread(() -> r.engine.expandVolume(busy.id(), 16 * MIB, 0)));
            assertTrue(e.getMessage().contains("in progress"), e.getMessage());
            expect(Kind.ABORTED, () -> onAnotherThread(() -> r.engine.deleteVolume(busy.id())));
            expect(Kind.ABORTED, () -> onAnotherThread(() -> r.node.stage(busy.id(), dir.resolve("s"), VolumeMode.BLOCK, "", List.of(), false)));
            // another volume is not held up
            onAnotherThread(() -> r.engine.expandVolume(free.id(), 16 * MIB, 0));
            assertEquals(16 * MIB, r.engine.volume(free.id()).orElseThrow().capacityBytes());
        }
        assertEquals(8 * MIB, Files.size(r.image(busy)), "the refused calls changed nothing");
        assertEquals(16 * MIB, r.engine.expandVolume(busy.id(), 16 * MIB, 0).capacityBytes(), "free again once released");
    }
}
