package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.testing.Launcher;

/**
 * The bench row of issue 35 "evacuation time for 5 volumes of 1 GiB half full", not a test: runs
 * only from {@code BENCH_ONLY=evacuate make bench} (bench/run.sh sets LOOPCSI_BENCH_EVACUATE=1 and
 * starts kube-testenv). Pool "evb" with the nodes node-p and node-q of {@link TwoNodePool} (names of
 * its own: {@code evacuate} moves every pool's volumes off a node); five block claims of 1 GiB on
 * node-p, each with 512 MiB of random data written in 1 MiB extents at every other MiB; then
 * {@code loopcsi evacuate --node node-p --apply} as an admin runs it, timed from its start to its
 * exit. It checks what it measured: every claim Bound on node-q to an image with the same bytes.
 * Writes target/bench/evacuate.txt (one line per figure).
 */
class EvacuationBenchKubeIT {

    static final String POOL = "evb";
    static final String DRIVER = "evb.loopcsi.io";
    static final String APPS = "evacuate-bench";
    static final long MI = 1L << 20;
    static final int VOLUMES = Integer.getInteger("bench.evacuate.volumes", 5);

    static TwoNodePool pool;
    static ApiVolumeProvider controllerCode;

    @BeforeAll
    static void fiveHalfFullVolumesOnNodeP() throws Exception {
        assumeTrue("1".equals(System.getenv("LOOPCSI_BENCH_EVACUATE")), "a benchmark: BENCH_ONLY=evacuate make bench");
        pool = TwoNodePool.create(new TwoNodePool.Spec("EvacuationBenchKubeIT", POOL, List.of("node-p", "node-q"), """
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: evb}
                spec:
                  capacityPerNode: 16Gi
                  storageClasses: [{name: evb-block, volumeMode: Block}]
                """, StoragePoolReconciler::new, false, null));
        pool.rollOut(a -> {
        });
        var admin = pool.admin();
        controllerCode = pool.closeFirst(new ApiVolumeProvider(admin, POOL, DRIVER, Duration.ofSeconds(100), Duration.ofSeconds(60),
                Clock.systemUTC()).start());
        admin.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(APPS).endMetadata()
                .build()).create();
        byte[] extent = new byte[(int) MI];
        for (int i = 1; i <= VOLUMES; i++) {
            ProvisionedClaim c = ProvisionedClaim.make(admin, controllerCode, DRIVER, APPS, "bench-" + i, "evb-block", true, "1Gi", false,
                    "node-p", Map.of(), Map.of());
            Random random = new Random(i);
            try (RandomAccessFile f = new RandomAccessFile(image("node-p", c.volume().id()).toFile(), "rw")) {
                for (long at = 0; at < 1024 * MI; at += 2 * MI) {
                    random.nextBytes(extent);
                    f.seek(at);
                    f.write(extent);
                }
                f.getFD().sync();
            }
        }
    }

    @Test
    void evacuateFiveVolumesOfOneGibHalfFull() throws Exception {
        var admin = pool.admin();
        Map<String, String> before = new LinkedHashMap<>();
        long allocated = 0;
        for (int i = 1; i <= VOLUMES; i++) {
            String id = volumeOf("bench-" + i);
            Path image = image("node-p", id);
            before.put("bench-" + i, EvacuateKubeIT.digest(image));
            allocated += EvacuateKubeIT.du(image);
        }
        String loadBefore = uptime();
        long t0 = System.nanoTime();
        Launcher run = Launcher.start(pool.root(), "evacuate-bench", List.of("evacuate", "--node", "node-p", "--apply"), Map.of());
        int exit = run.exitStatus(Duration.ofMinutes(30));
        double seconds = (System.nanoTime() - t0) / 1e9;
        String loadAfter = uptime();
        System.out.println("---- evacuate:\n" + run.log());
        assertEquals(0, exit, run.log());
        for (var e : before.entrySet()) {
            String id = volumeOf(e.getKey());
            assertEquals("node-q", admin.resources(LoopVolume.class).withName(POOL + "." + id).get().getSpec().getNode(), e.getKey());
            assertEquals(e.getValue(), EvacuateKubeIT.digest(image("node-q", id)), e.getKey() + ": the same bytes on node-q");
        }
        double mib = allocated / (double) MI;
        List<String> rows = new ArrayList<>();
        rows.add(String.format("evacuation of %d block volumes of 1 GiB, %.0f MiB allocated in all: %.1f s (%.1f s per volume, %.0f MiB/s)",
                VOLUMES, mib, seconds, seconds / VOLUMES, mib / seconds));
        rows.add("load before: " + loadBefore);
        rows.add("load after: " + loadAfter);
        rows.forEach(r -> System.out.println("BENCH " + r));
        Files.createDirectories(Path.of("target/bench"));
        Files.write(Path.of("target/bench/evacuate.txt"), rows);
    }

    static String volumeOf(String claim) {
        var admin = pool.admin();
        String pv = admin.persistentVolumeClaims().inNamespace(APPS).withName(claim).get().getSpec().getVolumeName();
        return admin.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
    }

    static Path image(String node, String id) {
        return pool.dataDir(node).resolve("volumes/" + id + ".img");
    }

    static String uptime() throws Exception {
        Process p = new ProcessBuilder("uptime").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor();
        return out;
    }

    @AfterAll
    static void stop() throws Exception {
        if (pool != null) {
            pool.close();
        }
    }
}
