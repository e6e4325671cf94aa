package io.loopcsi.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import csi.v1.CapacityRange;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.ListVolumesResponse;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.ProbeRequest;
import csi.v1.VolumeCapability;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.KernelCleanup;

/**
 * loopcsi benchmarks (issue 6): start-up, create/delete churn, the xfs lifecycle against the same
 * kernel work as raw commands, 1000 volumes in one pool, and the driver's RSS. The driver is the
 * packaged one, started as a process through ./loopcsi; each benchmark runs in its own temp
 * directory and releases every mount, loop device and file it made, also on failure.
 * Sizes come from the environment (BENCH_*); see bench/README.md. Prints a table and writes JSON.
 */
public final class Bench {

    /** Commands the benchmarks run (dd, the raw-lifecycle script, stat, git): the engine's runner, generous timeout. */
    static final CommandRunner SHELL = new CommandRunner(java.time.Duration.ofMinutes(10));

    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    final Path project = Path.of(env("BENCH_PROJECT", ".")).toAbsolutePath().normalize();
    final Path launcher = project.resolve("loopcsi");
    final Path tmpRoot = Path.of(env("BENCH_TMP", "/tmp"));
    final Path out = Path.of(env("BENCH_OUT", project.resolve("target/bench/results.json").toString()));
    final int starts = Integer.parseInt(env("BENCH_STARTS", "10"));
    final int churn = Integer.parseInt(env("BENCH_CHURN", "300"));
    final int lifecycles = Integer.parseInt(env("BENCH_LIFECYCLE", "5"));
    final int volumes = Integer.parseInt(env("BENCH_VOLUMES", "1000"));
    final long volumeBytes = Long.parseLong(env("BENCH_VOLUME_MIB", "16")) * MIB;
    final int pageSize = Integer.parseInt(env("BENCH_PAGE", "100"));
    final String jdk25 = env("BENCH_JDK25", "/usr/lib/jvm/temurin-25-jdk-amd64");
    /** Which benchmarks run; "transfer" only when named (52-64 s measured at load 10, over the 60 s a default one may take). */
    final Set<String> only = Set.of(env("BENCH_ONLY", "startup,churn,lifecycle,scale,io,idle").split(","));
    /**
     * What ./loopcsi runs (LOOPCSI_RUNTIME, passed on to every driver it starts): jvm, or native
     * (the executable of `make native`). Every row but the start modes measures that runtime; the
     * start modes of the JVM (archives, JDKs) make no sense for native, which has one.
     */
    final String runtime = env("LOOPCSI_RUNTIME", "jvm");
    /** How long the idle driver is watched (BENCH_IDLE_SECONDS). */
    final int idleSeconds = Integer.parseInt(env("BENCH_IDLE_SECONDS", "60"));
    /** How long a started driver is left to finish starting (its pool summary, JIT) before it is watched. */
    final int idleSettleSeconds = Integer.parseInt(env("BENCH_IDLE_SETTLE", "15"));

    /** Rows of the table, in order: benchmark, metric, value, unit. */
    final List<Map<String, Object>> rows = new ArrayList<>();
    /** RSS rows (benchmark 5), appended after the others. */
    final List<Map<String, Object>> rssRows = new ArrayList<>();

    /** Held so that the level sticks: netty warns about SO_KEEPALIVE on every unix-socket channel. */
    static final java.util.logging.Logger NETTY = java.util.logging.Logger.getLogger("io.netty");

    public static void main(String[] args) throws Exception {
        quietNetty();
        new Bench().run();
    }

    static void quietNetty() {
        NETTY.setLevel(java.util.logging.Level.SEVERE);
        // netty logs through JUL here, as quiet as in the product. Through slf4j it would reach Quarkus' delayed
        // handler, which takes every level: the HTTP/2 frame logger then formatted every frame of a transfer (4 % of
        // its event loops' CPU, measured with perf), which a node, logging netty at INFO, never does
        io.netty.util.internal.logging.InternalLoggerFactory.setDefaultFactory(io.netty.util.internal.logging.JdkLoggerFactory.INSTANCE);
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v;
    }

    void run() throws Exception {
        if (!Files.exists(project.resolve("target/quarkus-app/quarkus-run.jar"))) {
            throw new IllegalStateException("build first: make build");
        }
        warmClient();
        row("0 runtime", "./loopcsi runs (LOOPCSI_RUNTIME)", runtime, "");
        if (only.contains("startup")) {
            guarded("startup", this::startup);
        }
        if (only.contains("churn")) {
            guarded("churn", this::churn);
        }
        if (only.contains("lifecycle")) {
            guarded("lifecycle", this::lifecycle);
        }
        if (only.contains("scale")) {
            guarded("scale", this::scale);
        }
        if (only.contains("idle")) {
            guarded("idle", this::idle);
        }
        if (only.contains("io")) {
            guarded("io", d -> new IoBench(this).run(d));
        }
        if (only.contains("transfer")) {
            guarded("transfer", d -> new TransferBench(this).run(d));
        }
        rows.addAll(rssRows);
        printTable();
        writeJson();
    }

    interface Body {
        void run(Path dir) throws Exception;
    }

    /** Runs one benchmark in a temp dir of its own, released whatever happens. */
    void guarded(String name, Body body) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory(tmpRoot, "loopcsi-bench-" + name + "-").toRealPath();
            System.err.println("bench: " + name + " in " + dir);
            body.run(dir);
        } catch (Exception | AssertionError e) {
            System.err.println("bench: " + name + " FAILED: " + e);
            e.printStackTrace();
            row(name, "FAILED", e.toString(), "");
        } finally {
            if (dir != null) {
                KernelCleanup.releaseAndDelete(dir);
            }
        }
    }

    /** The harness's own first gRPC channel costs class loading; pay it before timing anything. */
    void warmClient() throws Exception {
        Path d = Files.createTempDirectory(tmpRoot, "loopcsi-bench-warm-");
        try (CsiClient c = new CsiClient(d.resolve("none.sock"))) {
            c.identity.withDeadlineAfter(200, java.util.concurrent.TimeUnit.MILLISECONDS).probe(ProbeRequest.getDefaultInstance());
        } catch (RuntimeException expected) {
            // nothing listens there
        } finally {
            KernelCleanup.releaseAndDelete(d);
        }
    }

    // ---- 1. start to first successful Probe -------------------------------------------------

    void startup(Path dir) throws Exception {
        if (runtime.equals("native")) {
            measure(dir, "native", null, "", false);
            return;
        }
        startMode(dir, "jdk17", null, "", null);
        startMode(dir, "jdk17+appcds", null, "-XX:SharedArchiveFile=" + dir.resolve("app17.jsa"),
                "-XX:ArchiveClassesAtExit=" + dir.resolve("app17.jsa"));
        if (!jdk25.equals("none") && Files.isExecutable(Path.of(jdk25, "bin/java"))) {
            startMode(dir, "jdk25", jdk25, "", null);
            startMode(dir, "jdk25+aotcache", jdk25, "-XX:AOTCache=" + dir.resolve("app25.aot"),
                    "-XX:AOTCacheOutput=" + dir.resolve("app25.aot"));
        }
        launcherMode(dir, "jdk17+launcher", null);
        if (!jdk25.equals("none") && Files.isExecutable(Path.of(jdk25, "bin/java"))) {
            launcherMode(dir, "jdk25+launcher", jdk25);
        }
    }

    /**
     * The launcher's own archive, as a developer gets it (./loopcsi: dynamic AppCDS on JDK 17, the AOT
     * cache on JDK 25): every roles-* archive of the application is removed, a first start that
     * serves records one (SIGTERM: the JVM writes it), the next start publishes it; then the measured starts.
     */
    void launcherMode(Path dir, String mode, String javaHome) throws Exception {
        String app = System.getenv("BENCH_APP");
        Path appDir = (app == null || app.isBlank() ? project.resolve("target/quarkus-app") : Path.of(app)).toAbsolutePath();
        try (java.nio.file.DirectoryStream<Path> old = Files.newDirectoryStream(appDir, "roles-*")) {
            for (Path p : old) {
                Files.delete(p);
            }
        }
        for (String step : List.of("record", "publish")) {
            Path t = Files.createDirectories(dir.resolve(mode + "-" + step));
            try (Driver d = Driver.start(launcher, t, javaHome, "", "driver.log", true)) {
                d.terminate();
            }
        }
        measure(dir, mode, javaHome, "", true);
    }

    void startMode(Path dir, String mode, String javaHome, String opts, String trainingOpts) throws Exception {
        if (trainingOpts != null) {
            // training run: a typical session (probe, create, list, delete), then SIGTERM writes the archive/cache
            Path t = Files.createDirectories(dir.resolve(mode + "-training"));
            try (Driver d = Driver.start(launcher, t, javaHome, trainingOpts, "driver.log")) {
                try (CsiClient c = d.client()) {
                    String id = c.controller.createVolume(block("train", MIB)).getVolume().getVolumeId();
                    c.controller.listVolumes(ListVolumesRequest.getDefaultInstance());
                    c.controller.getCapacity(GetCapacityRequest.getDefaultInstance());
                    c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                }
                d.terminate();
            }
        }
        measure(dir, mode, javaHome, opts, false);
    }

    /** BENCH_STARTS starts of one mode, each on a new socket and an empty pool: the rows of that mode. */
    void measure(Path dir, String mode, String javaHome, String opts, boolean launcherArchive) throws Exception {
        double[] ms = new double[starts];
        double[] rss = new double[starts];
        for (int i = 0; i < starts; i++) {
            Path s = Files.createDirectories(dir.resolve(mode + "-" + i));
            try (Driver d = Driver.start(launcher, s, javaHome, opts, "driver.log", launcherArchive)) {
                ms[i] = d.readyNanos / 1e6;
                rss[i] = d.rssKib()[0] / 1024.0;
                if (i == 0 && !opts.isEmpty() && d.log().contains("Unable to use")) {
                    System.err.println("bench: " + mode + " could not use its archive:\n" + d.log());
                }
                d.terminate();
            }
        }
        row("1 startup", mode + ": start to first Probe, median of " + starts, median(ms), "ms");
        row("1 startup", mode + ": min / max", String.format("%.0f / %.0f", min(ms), max(ms)), "ms");
        row("1 startup", mode + ": RSS at ready, median", median(rss), "MiB");
    }

    // ---- 2. churn over one connection -------------------------------------------------------

    void churn(Path dir) throws Exception {
        try (Driver d = Driver.start(launcher, dir, null, "", "driver.log"); CsiClient c = d.client()) {
            int warm = Math.max(10, churn / 5);
            for (int i = 0; i < warm; i++) {
                pair(c, "warm-" + i, null, null);
            }
            double[] create = new double[churn];
            double[] delete = new double[churn];
            long t0 = System.nanoTime();
            for (int i = 0; i < churn; i++) {
                pair(c, "churn-" + i, create, delete);
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double[] cap = new double[50];
            for (int i = 0; i < cap.length; i++) {
                long s = System.nanoTime();
                c.controller.getCapacity(GetCapacityRequest.getDefaultInstance());
                cap[i] = (System.nanoTime() - s) / 1e6;
            }
            row("2 churn", "Create+Delete pairs (block, 1 MiB), " + churn + " pairs", churn / secs, "pairs/s");
            row("2 churn", "RPCs per second", 2 * churn / secs, "ops/s");
            row("2 churn", "CreateVolume p50 / p99", String.format("%.2f / %.2f", pct(create, 50), pct(create, 99)), "ms");
            row("2 churn", "DeleteVolume p50 / p99", String.format("%.2f / %.2f", pct(delete, 50), pct(delete, 99)), "ms");
            row("2 churn", "GetCapacity p50 (empty pool)", pct(cap, 50), "ms");
            rss("2 churn", d);
        }
    }

    void pair(CsiClient c, String name, double[] create, double[] delete) {
        long s = System.nanoTime();
        String id = c.controller.createVolume(block(name, MIB)).getVolume().getVolumeId();
        long m = System.nanoTime();
        c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        long e = System.nanoTime();
        if (create != null) {
            int i = Integer.parseInt(name.substring(name.lastIndexOf('-') + 1));
            create[i] = (m - s) / 1e6;
            delete[i] = (e - m) / 1e6;
        }
    }

    // ---- 3. xfs lifecycle, driver vs raw commands -------------------------------------------

    static final String[] STEPS = { "create", "stage", "publish", "write", "unpublish", "unstage", "delete" };

    void lifecycle(Path dir) throws Exception {
        Path script = project.resolve("bench/raw-lifecycle.sh");
        double[] driverTotal = new double[lifecycles];
        double[] rawTotal = new double[lifecycles];
        Map<String, double[]> driverSteps = new LinkedHashMap<>();
        Map<String, double[]> rawSteps = new LinkedHashMap<>();
        for (String s : STEPS) {
            driverSteps.put(s, new double[lifecycles]);
            rawSteps.put(s, new double[lifecycles]);
        }
        try (Driver d = Driver.start(launcher, dir, null, "", "driver.log"); CsiClient c = d.client()) {
            // one untimed round of each warms the driver's JIT and the host's caches alike
            driverLifecycle(c, dir, "warm", new LinkedHashMap<>());
            rawLifecycle(script, dir.resolve("raw-warm"), new LinkedHashMap<>());
            for (int i = 0; i < lifecycles; i++) {
                Map<String, Double> ds = new LinkedHashMap<>();
                Map<String, Double> rs = new LinkedHashMap<>();
                // alternate the order so that neither side always runs on a cache the other warmed
                if (i % 2 == 0) {
                    driverTotal[i] = driverLifecycle(c, dir, "d" + i, ds);
                    rawTotal[i] = rawLifecycle(script, dir.resolve("raw-" + i), rs);
                } else {
                    rawTotal[i] = rawLifecycle(script, dir.resolve("raw-" + i), rs);
                    driverTotal[i] = driverLifecycle(c, dir, "d" + i, ds);
                }
                for (String s : STEPS) {
                    driverSteps.get(s)[i] = ds.getOrDefault(s, Double.NaN);
                    rawSteps.get(s)[i] = rs.getOrDefault(s, Double.NaN);
                }
            }
            String n = " (median of " + lifecycles + ")";
            row("3 xfs lifecycle", "driver: create 1 GiB .. delete, total" + n, median(driverTotal), "ms");
            row("3 xfs lifecycle", "raw commands, total" + n, median(rawTotal), "ms");
            row("3 xfs lifecycle", "ratio driver/raw (median of per-round ratios)", medianRatio(driverTotal, rawTotal), "x");
            for (String s : STEPS) {
                row("3 xfs lifecycle", "  " + s + ": driver / raw", String.format("%.1f / %.1f", median(driverSteps.get(s)),
                        median(rawSteps.get(s))), "ms");
            }
            rss("3 xfs lifecycle", d);
        }
    }

    double driverLifecycle(CsiClient c, Path dir, String tag, Map<String, Double> steps) {
        Path staging = dir.resolve("staging-" + tag);
        Path target = dir.resolve("target-" + tag);
        VolumeCapability cap = xfs();
        long start = System.nanoTime();
        long[] last = { start };
        java.util.function.Consumer<String> step = s -> {
            long now = System.nanoTime();
            steps.put(s, (now - last[0]) / 1e6);
            last[0] = now;
        };
        String id = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("life-" + tag)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(GIB)).addVolumeCapabilities(cap).build())
                .getVolume().getVolumeId();
        step.accept("create");
        c.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(cap).build());
        step.accept("stage");
        c.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(cap).build());
        step.accept("publish");
        SHELL.run("dd", "if=/dev/zero", "of=" + target.resolve("data"), "bs=1M", "count=16", "conv=fsync", "status=none");
        step.accept("write");
        c.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
        step.accept("unpublish");
        c.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        step.accept("unstage");
        c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        step.accept("delete");
        return (System.nanoTime() - start) / 1e6;
    }

    double rawLifecycle(Path script, Path dir, Map<String, Double> steps) {
        String outText = SHELL.run("bash", script.toString(), dir.toString(), "1G", "16");
        double total = Double.NaN;
        for (String line : outText.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length == 2) {
                if (f[0].equals("total")) {
                    total = Double.parseDouble(f[1]);
                } else {
                    steps.put(f[0], Double.parseDouble(f[1]));
                }
            }
        }
        return total;
    }

    // ---- 4. scale: many volumes in one pool -------------------------------------------------

    void scale(Path dir) throws Exception {
        double rss0;
        double[] create = new double[volumes];
        List<String> ids = new ArrayList<>();
        try (Driver d = Driver.start(launcher, dir, null, "", "driver-1.log")) {
            try (CsiClient c = d.client()) {
                walkPages(c); // the same light calls as after the restart below, on an empty pool
                c.controller.getCapacity(GetCapacityRequest.getDefaultInstance());
                rss0 = d.rssKib()[0] / 1024.0;
                long t0 = System.nanoTime();
                for (int i = 0; i < volumes; i++) {
                    long s = System.nanoTime();
                    ids.add(c.controller.createVolume(block("scale-" + i, volumeBytes)).getVolume().getVolumeId());
                    create[i] = (System.nanoTime() - s) / 1e6;
                }
                double secs = (System.nanoTime() - t0) / 1e9;
                int tenth = Math.max(1, volumes / 10);
                row("4 scale", "create " + volumes + " block volumes (" + volumeBytes / MIB + " MiB), total", secs, "s");
                row("4 scale", "CreateVolume p50 / p99", String.format("%.2f / %.2f", pct(create, 50), pct(create, 99)), "ms");
                row("4 scale", "CreateVolume p50, first 10% / last 10%", String.format("%.2f / %.2f",
                        median(Arrays.copyOfRange(create, 0, tenth)), median(Arrays.copyOfRange(create, volumes - tenth, volumes))),
                        "ms");
                double[] cap = timed(20, () -> c.controller.getCapacity(GetCapacityRequest.getDefaultInstance()));
                row("4 scale", "GetCapacity p50 with " + volumes + " volumes", pct(cap, 50), "ms");
            }
            d.terminate();
        }
        try (Driver d = Driver.start(launcher, dir, null, "", "driver-2.log")) {
            row("4 scale", "restart (SIGTERM, start) to first Probe with " + volumes + " volumes", d.readyNanos / 1e6, "ms");
            try (CsiClient c = d.client()) {
                long s = System.nanoTime();
                List<Double> first = walkPages(c);
                row("4 scale", "first full ListVolumes walk after restart (pages of " + pageSize + ")", (System.nanoTime() - s) / 1e6,
                        "ms");
                List<Double> pages = new ArrayList<>();
                for (int r = 0; r < 5; r++) {
                    pages.addAll(walkPages(c));
                }
                double[] p = pages.stream().mapToDouble(Double::doubleValue).toArray();
                row("4 scale", "ListVolumes page (" + pageSize + " entries) p50 / p99",
                        String.format("%.2f / %.2f", pct(p, 50), pct(p, 99)), "ms");
                double[] all = timed(5, () -> c.controller.listVolumes(ListVolumesRequest.getDefaultInstance()));
                row("4 scale", "ListVolumes, all " + volumes + " in one page, p50", pct(all, 50), "ms");
                c.controller.getCapacity(GetCapacityRequest.getDefaultInstance());
                if (first.size() * pageSize < volumes) {
                    throw new AssertionError("listing found fewer pages than volumes need");
                }
                double rssN = d.rssKib()[0] / 1024.0;
                row("4 scale", "RSS after restart, empty pool / " + volumes + " volumes",
                        String.format("%.0f / %.0f", rss0, rssN), "MiB");
                row("4 scale", "RSS per volume ((RSS_n - RSS_0) / n)", (rssN - rss0) * 1024 / volumes, "KiB");
                long t0 = System.nanoTime();
                for (String id : ids) {
                    c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                }
                row("4 scale", "delete " + volumes + " volumes, total", (System.nanoTime() - t0) / 1e9, "s");
            }
            rss("4 scale", d);
        }
    }

    // ---- 9. idle: CPU of a driver that serves nothing ----------------------------------------

    /**
     * CPU an idle standalone driver spends, with an empty pool and with BENCH_VOLUMES volumes: each
     * driver started anew, left 5 s to finish starting (its summary of the pool), then watched for
     * BENCH_IDLE_SECONDS without a call. From /proc/PID/stat: utime + stime of the JVM, and the
     * commands it ran and waited for (cutime + cstime). Goal (issue 33): at most 2 ms per second.
     */
    void idle(Path dir) throws Exception {
        idleRow(dir, "empty pool");
        try (Driver d = Driver.start(launcher, dir, null, "", "driver-fill.log"); CsiClient c = d.client()) {
            for (int i = 0; i < volumes; i++) {
                c.controller.createVolume(block("idle-" + i, volumeBytes));
            }
            d.terminate();
        }
        idleRow(dir, volumes + " volumes");
    }

    private void idleRow(Path dir, String pool) throws Exception {
        try (Driver d = Driver.start(launcher, dir, null, "", "driver-idle.log")) {
            Thread.sleep(idleSettleSeconds * 1000L);
            long[] before = d.cpuTicks();
            long t0 = System.nanoTime();
            Thread.sleep(idleSeconds * 1000L);
            long[] after = d.cpuTicks();
            double secs = (System.nanoTime() - t0) / 1e9;
            double msPerTick = 1000.0 / Long.parseLong(SHELL.run("getconf", "CLK_TCK").strip());
            row("9 idle", "standalone, " + pool + ": CPU over " + idleSeconds + " s without calls (JVM / its commands)",
                    String.format("%.2f / %.2f", (after[0] - before[0]) * msPerTick / secs, (after[1] - before[1]) * msPerTick / secs),
                    "ms/s");
            d.terminate();
        }
    }

    List<Double> walkPages(CsiClient c) {
        List<Double> pages = new ArrayList<>();
        String token = "";
        do {
            long s = System.nanoTime();
            ListVolumesResponse r = c.controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(pageSize)
                    .setStartingToken(token).build());
            pages.add((System.nanoTime() - s) / 1e6);
            token = r.getNextToken();
        } while (!token.isEmpty());
        return pages;
    }

    // ---- helpers ----------------------------------------------------------------------------

    void rss(String bench, Driver d) {
        long[] r = d.rssKib();
        int at = rows.size();
        row("5 RSS", "driver after " + bench + ": VmRSS / VmHWM", String.format("%.0f / %.0f", r[0] / 1024.0, r[1] / 1024.0), "MiB");
        rssRows.add(rows.remove(at));
    }

    static double[] timed(int n, Supplier<Object> call) {
        double[] t = new double[n];
        for (int i = 0; i < n; i++) {
            long s = System.nanoTime();
            call.get();
            t[i] = (System.nanoTime() - s) / 1e6;
        }
        return t;
    }

    static CreateVolumeRequest block(String name, long bytes) {
        return CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                .addVolumeCapabilities(VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)))
                .build();
    }

    static VolumeCapability xfs() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("xfs"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                .build();
    }

    static double median(double[] v) {
        return pct(v, 50);
    }

    /** Nearest-rank percentile. */
    static double pct(double[] v, double p) {
        double[] s = Arrays.stream(v).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (s.length == 0) {
            return Double.NaN;
        }
        if (p == 50 && s.length % 2 == 0) {
            return (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        }
        int rank = (int) Math.ceil(p / 100.0 * s.length);
        return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
    }

    static double medianRatio(double[] a, double[] b) {
        double[] r = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = a[i] / b[i];
        }
        return median(r);
    }

    static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    void row(String bench, String metric, Object value, String unit) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("benchmark", bench);
        r.put("metric", metric);
        r.put("value", value instanceof Double dv ? Math.round(dv * 100) / 100.0 : value);
        r.put("unit", unit);
        rows.add(r);
        System.err.printf("bench: %-16s %-70s %s %s%n", bench, metric, format(r.get("value")), unit);
    }

    static String format(Object v) {
        if (v instanceof Double d) {
            return Math.abs(d) >= 100 ? String.format("%.0f", d) : String.format("%.2f", d);
        }
        return String.valueOf(v);
    }

    void printTable() {
        System.out.println();
        System.out.println("| benchmark | metric | value | unit |");
        System.out.println("|---|---|---:|---|");
        for (Map<String, Object> r : rows) {
            System.out.printf("| %s | %s | %s | %s |%n", r.get("benchmark"), r.get("metric"), format(r.get("value")), r.get("unit"));
        }
        System.out.println();
    }

    void writeJson() throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("machine", machine());
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("starts", starts);
        config.put("churnPairs", churn);
        config.put("lifecycles", lifecycles);
        config.put("volumes", volumes);
        config.put("volumeBytes", volumeBytes);
        config.put("pageSize", pageSize);
        doc.put("config", config);
        doc.put("results", rows);
        Files.createDirectories(out.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.toFile(), doc);
        System.out.println("results: " + out);
    }

    Map<String, Object> machine() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    m.put("memTotalKib", Long.parseLong(line.replaceAll("[^0-9]", "")));
                }
            }
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    m.put("cpuModel", line.substring(line.indexOf(':') + 1).trim());
                    break;
                }
            }
            m.put("kernel", Files.readString(Path.of("/proc/sys/kernel/osrelease")).strip());
            m.put("loadavg", Files.readString(Path.of("/proc/loadavg")).strip());
        } catch (IOException ignored) {
            // partial
        }
        m.put("harnessJava", System.getProperty("java.version"));
        m.put("gitCommit", gitCommit());
        m.put("tmpFilesystem", SHELL.run("stat", "-f", "-c", "%T", tmpRoot.toString()).strip());
        return m;
    }

    String gitCommit() {
        try {
            return SHELL.run("git", "-C", project.toString(), "rev-parse", "--short", "HEAD").strip();
        } catch (RuntimeException e) {
            return "unknown";
        }
    }
}
