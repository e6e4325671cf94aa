package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.loopcsi.engine.CapacityPolicy;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.FailPoints;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.LoopDevices;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.SectorSizes;
import io.loopcsi.engine.ThickAllocation;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.engine.VolumeLocks;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.service.Grants;

/**
 * An abandoned transfer on its destination node (issue 35): the fetch's partial image and progress
 * stay while a LoopVolume of this node names the volume or a LoopTransfer still authorises the
 * transfer to this node (a CreateVolume asked again goes on with them), and go, with nothing else of
 * the pool, once neither does. Real files in a real pool directory, the real engine's delete.
 */
class AbandonedFetchesTest {

    private static final CommandRunner RUNNER = new CommandRunner(Duration.ofSeconds(60));
    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");
    private static final long MIB = 1 << 20;

    @TempDir
    Path dir;
    private PoolDirectory pool;
    private VolumeEngine engine;
    private VolumeLocks locks;
    /** Volume IDs named by a LoopVolume of this node. */
    private final Set<String> named = new HashSet<>();
    private boolean listed = true;
    private final Map<String, TransferGrant> loopTransfers = new java.util.HashMap<>();
    private final List<String> asked = new ArrayList<>();

    @BeforeEach
    void setUp() {
        pool = new PoolDirectory(dir.resolve("pool"));
        locks = new VolumeLocks();
        LoopDevices loops = new LoopDevices(RUNNER);
        engine = new VolumeEngine(pool, CapacityPolicy.cap(1L << 30), "node-b", RUNNER, loops, locks, FailPoints.NONE,
                new ThickAllocation(pool, RUNNER, locks), new SectorSizes(pool, RUNNER, loops));
    }

    @AfterEach
    void tearDown() {
        pool.lock().close();
    }

    /** A fetch into volume name cut short as this node stopped: its partial image and progress, as the engine keeps them. */
    private String cutFetch(String name) {
        String id = Ids.volumeIdFor(name);
        Path progress = PoolDirectory.transferProgress(pool.root(), id);
        CreateRequest req = new CreateRequest(name, 4 * MIB, 0, VolumeMode.BLOCK, "", Ids.snapshotIdFor("src"), null, Map.of());
        EngineException e = assertThrows(EngineException.class, () -> engine.createVolumeFrom(req,
                new VolumeEngine.RemoteSource("node-a", null, null, 4 * MIB, 0), (image, bytes) -> {
                    try {
                        PoolDirectory.createSparse(image, bytes);
                        Files.createDirectories(progress.getParent());
                        Files.writeString(progress, "{}");
                    } catch (Exception x) {
                        throw new IllegalStateException(x);
                    }
                    throw new EngineException(EngineException.Kind.ABORTED, "the node stops");
                }));
        assertEquals(EngineException.Kind.ABORTED, e.kind());
        return id;
    }

    private void authorise(String id, String destination, Instant notAfter) {
        loopTransfers.put(id, new TransferGrant(id, Ids.snapshotIdFor("src"), "node-a", destination, NOW.minusSeconds(3600), notAfter));
    }

    private TransferSweeper sweeper(Grants grants) {
        AbandonedFetches f = new AbandonedFetches(pool.root(), "node-b", named::contains, () -> listed, engine,
                Clock.fixed(NOW, ZoneOffset.UTC));
        return new TransferSweeper(grants, List.of(f.held()));
    }

    private final Grants api = id -> {
        asked.add(id);
        return Optional.ofNullable(loopTransfers.get(id));
    };

    private Set<String> onDisk() throws Exception {
        Set<String> ids = new TreeSet<>();
        PoolDirectory.partialFetches(pool.root()).forEach(f -> ids.add(f.volumeId()));
        return ids;
    }

    private Set<String> files(String sub) throws Exception {
        try (Stream<Path> s = Files.list(pool.root().resolve(sub))) {
            return new TreeSet<>(s.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void aFetchGoesOnlyWhenNoLoopVolumeNamesItAndNoLoopTransferStillAuthorisesIt() throws Exception {
        String volume = cutFetch("named"); // its LoopVolume exists: queued, or being made again after a restart
        named.add(volume);
        String authorised = cutFetch("authorised"); // finalizer removed by hand; the provisioner's retry makes it again
        authorise(authorised, "node-b", NOW.plusSeconds(600));
        String recent = cutFetch("recent"); // its window passed minutes ago: a retry may still come and renew it
        authorise(recent, "node-b", NOW.minus(AbandonedFetches.GRACE).plusSeconds(60));
        String stale = cutFetch("stale"); // no CreateVolume asked for it since its window, long ago
        authorise(stale, "node-b", NOW.minus(AbandonedFetches.GRACE).minusSeconds(60));
        String elsewhere = cutFetch("elsewhere"); // the retry placed the volume on another node
        authorise(elsewhere, "node-c", NOW.plusSeconds(600));
        String gone = cutFetch("gone"); // the controller released the LoopTransfer (or it was never there)
        String committed = engine.createVolume(new CreateRequest("committed", 4 * MIB, 0, VolumeMode.BLOCK, "", null, null, Map.of())).id();

        assertEquals(Set.of(elsewhere, gone, stale), sweeper(api).sweep());

        assertEquals(new TreeSet<>(Set.of(volume, authorised, recent)), onDisk());
        Set<String> volumes = new TreeSet<>(Set.of(committed + ".img", committed + ".json"));
        for (String id : List.of(volume, authorised, recent)) {
            volumes.add(id + ".img.tmp");
        }
        assertEquals(volumes, files("volumes"), "the kept fetches' partial images and the committed volume stay, nothing else");
        assertEquals(Set.of(authorised, recent, stale, elsewhere, gone), new TreeSet<>(asked),
                "one look at the API per unnamed fetch; none for a fetch its LoopVolume names");

        engine.recover(); // the next start: what stays is still kept to go on with
        assertEquals(new TreeSet<>(Set.of(volume, authorised, recent)), onDisk());
    }

    @Test
    void nothingGoesBeforeTheNodesLoopVolumesAreListed() throws Exception {
        String id = cutFetch("gone");
        listed = false; // the first sweep runs at the start, before the informers have synced
        assertEquals(Set.of(), sweeper(api).sweep());
        assertEquals(List.of(), asked);
        assertEquals(Set.of(id), onDisk());
        listed = true;
        assertEquals(Set.of(id), sweeper(api).sweep());
        assertEquals(Set.of(), onDisk());
        assertEquals(Set.of(), files("volumes"));
    }

    @Test
    void aFetchRunningOrNamedMeanwhileOrUnknownToTheApiServerStays() throws Exception {
        String running = cutFetch("running");
        String comesBack = cutFetch("comes-back");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread fetching = new Thread(() -> { // the fetch of "running" has started again and holds its volume
            try (VolumeLocks.Held h = locks.tryAcquire(running)) {
                held.countDown();
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        fetching.start();
        held.await();
        try {
            // a LoopVolume for "comes-back" arrives between the listing and the delete
            sweeper(id -> {
                if (id.equals(comesBack)) {
                    named.add(comesBack);
                }
                return Optional.empty();
            }).sweep();
            assertEquals(new TreeSet<>(Set.of(running, comesBack)), onDisk());
        } finally {
            release.countDown();
            fetching.join();
        }
        named.clear();
        sweeper(id -> {
            throw new IllegalStateException("connection refused");
        }).run(); // logged: kept for the next round
        assertEquals(new TreeSet<>(Set.of(running, comesBack)), onDisk());
        assertEquals(new TreeSet<>(Set.of(running, comesBack)), sweeper(api).sweep());
        assertTrue(onDisk().isEmpty());
    }
}
