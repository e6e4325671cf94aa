package io.loopcsi.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import csi.v1.CapacityRange;
import csi.v1.ControllerModifyVolumeRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.VolumeCapability;
import io.loopcsi.testing.CsiClient;

/**
 * Benchmark "io" (issue 22): what a pod's I/O gets. fio ({@code --direct=1 --ioengine=libaio}) on
 * volumes staged and published by the driver (a thin xfs volume fresh and then written, a thick
 * xfs volume, a thin ext4 volume, a raw block volume), each with the loop device's direct I/O on
 * and off (switched live with ControllerModifyVolume {@code directIO}), and the same jobs on a
 * plain directory of the pool's host filesystem as the baseline. {@code BENCH_IO_ROUNDS} rounds
 * (3), each with new volumes; within a round each job runs on every target before the next job,
 * so a noisy disk hurts all targets alike. Rows give the median over the rounds with the spread,
 * the median of the per-round ratios to the baseline (same round, same job slot), and the CPU time
 * the whole machine spent per I/O (from /proc/stat: fio, the loop device's kernel workers, the
 * filesystems), which says where the time goes when a 2-core machine is the limit.
 */
final class IoBench {

    /** One fio job: name, rw mode, block size, queue depth. */
    record Job(String name, String rw, String bs, int depth) {
    }

    /** Sequential write first: every file is written before the random jobs ("written", not fresh). */
    static final List<Job> JOBS = List.of(new Job("seqwrite 1M qd8", "write", "1M", 8), new Job("seqread 1M qd8", "read", "1M", 8),
            new Job("randread 4k qd1", "randread", "4k", 1), new Job("randread 4k qd32", "randread", "4k", 32),
            new Job("randwrite 4k qd1", "randwrite", "4k", 1), new Job("randwrite 4k qd32", "randwrite", "4k", 32));
    static final Job FIRST_WRITES = new Job("randwrite 4k qd32", "randwrite", "4k", 32);

    /** What fio measured, and the CPU time of the whole machine per I/O meanwhile. */
    record Result(double iops, double mbps, double p50us, double p99us, double cpuUsPerIo) {
    }

    /** Where fio runs: a file in a directory, or a device; for volumes, the volume and its capability. */
    record Target(String name, Path file, String volumeId, VolumeCapability cap) {
    }

    /** One row's results over the rounds, with each round's ratio to the baseline. */
    private static final class Series {
        final List<Result> results = new ArrayList<>();
        final List<Double> ratios = new ArrayList<>();
    }

    private final Bench bench;
    private final int seconds = Integer.parseInt(Bench.env("BENCH_IO_SECONDS", "6"));
    private final int rounds = Integer.parseInt(Bench.env("BENCH_IO_ROUNDS", "3"));
    private final long fileBytes = Long.parseLong(Bench.env("BENCH_IO_MIB", "1024")) * Bench.MIB;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Series> series = new LinkedHashMap<>();

    IoBench(Bench bench) {
        this.bench = bench;
    }

    void run(Path dir) throws Exception {
        Bench.SHELL.run("fio", "--version"); // fails with the command's own message when fio is missing
        try (Driver d = Driver.start(bench.launcher, dir, null, "", "driver.log"); CsiClient c = d.client()) {
            for (int round = 1; round <= rounds; round++) {
                String before = loadAverage();
                round(c, dir, round);
                // other work on the machine shows in every figure, the CPU per I/O most
                bench.row("6 io", "load average (1, 5, 15 min) before / after round " + round, before + " / " + loadAverage(), "");
            }
        }
        for (Map.Entry<String, Series> e : series.entrySet()) {
            report(e.getKey(), e.getValue());
        }
    }

    private void round(CsiClient c, Path dir, int round) throws Exception {
        Path hostDir = Files.createDirectories(dir.resolve("host"));
        Files.deleteIfExists(hostDir.resolve("fio.dat")); // fresh like the volumes
        Target host = new Target("host directory (baseline)", hostDir.resolve("fio.dat"), null, null);
        List<Target> volumes = new ArrayList<>();
        volumes.add(volume(c, dir, "thin xfs", round, fs("xfs"), Map.of()));
        volumes.add(volume(c, dir, "thick xfs", round, fs("xfs"), Map.of("provisioning", "thick")));
        volumes.add(volume(c, dir, "thin ext4", round, fs("ext4"), Map.of()));
        volumes.add(volume(c, dir, "block", round, blockCap(), Map.of()));
        if (round == 1) {
            for (Target v : volumes) {
                bench.row("6 io", "loop device of " + v.name(), device(dir, v), "");
            }
        }

        // the first-write penalty: random writes into a fresh thin image (every write allocates a host block), a thick one, the host
        Result hostFresh = fio(host, FIRST_WRITES);
        record(FIRST_WRITES.name() + ", fresh: " + host.name(), hostFresh, hostFresh);
        record(FIRST_WRITES.name() + ", fresh: thin xfs, dio on", fio(volumes.get(0), FIRST_WRITES), hostFresh);
        record(FIRST_WRITES.name() + ", fresh: thick xfs, dio on", fio(volumes.get(1), FIRST_WRITES), hostFresh);

        for (Job job : JOBS) {
            Result base = fio(host, job);
            record(job.name() + ": " + host.name(), base, base);
            for (String dio : List.of("on", "off")) {
                for (Target v : volumes) {
                    setDirectIo(c, v, dio);
                    record(job.name() + ": " + v.name() + ", dio " + dio, fio(v, job), base);
                }
            }
        }
        for (Target v : volumes) {
            release(c, v, dir, round);
        }
    }

    private static String loadAverage() throws java.io.IOException {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + " " + f[1] + " " + f[2];
    }

    /** What the kernel made of the volume's loop device: sector size, direct I/O, request queue depth. */
    private static String device(Path dir, Target v) throws Exception {
        io.loopcsi.engine.LoopDevices loops = new io.loopcsi.engine.LoopDevices(Bench.SHELL);
        String dev = loops.find(dir.resolve("pool/volumes/" + v.volumeId() + ".img")).orElseThrow();
        String queue = Files.readString(Path.of("/sys/block", Path.of(dev).getFileName().toString(), "queue/nr_requests")).strip();
        return dev + ": " + loops.logicalBlockSize(dev) + "-byte sectors, dio " + (loops.directIo(dev) ? "on" : "off")
                + ", nr_requests " + queue;
    }

    private void record(String row, Result r, Result base) {
        Series s = series.computeIfAbsent(row, k -> new Series());
        s.results.add(r);
        s.ratios.add(base.iops() > 0 ? r.iops() / base.iops() : Double.NaN);
    }

    private Target volume(CsiClient c, Path dir, String name, int round, VolumeCapability cap, Map<String, String> mutable) {
        String tag = name.replace(' ', '-') + "-r" + round;
        long size = fileBytes + 512 * Bench.MIB; // room for the filesystem's own metadata
        String id = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("io-" + tag)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(size)).addVolumeCapabilities(cap).putAllMutableParams(mutable)
                .build()).getVolume().getVolumeId();
        Path staging = dir.resolve("staging-" + tag);
        Path target = dir.resolve("target-" + tag);
        c.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(cap).build());
        c.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(cap).build());
        return new Target(name, cap.hasBlock() ? target : target.resolve("fio.dat"), id, cap);
    }

    private static void setDirectIo(CsiClient c, Target v, String dio) {
        c.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(v.volumeId())
                .putMutableParameters("directIO", dio).build());
    }

    private static void release(CsiClient c, Target v, Path dir, int round) {
        String tag = v.name().replace(' ', '-') + "-r" + round;
        c.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v.volumeId())
                .setTargetPath(dir.resolve("target-" + tag).toString()).build());
        c.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v.volumeId())
                .setStagingTargetPath(dir.resolve("staging-" + tag).toString()).build());
        // retried as csi-provisioner retries it: a device another mount namespace still holds goes when that lets go
        for (int attempt = 1;; attempt++) {
            try {
                c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.volumeId()).build());
                return;
            } catch (io.grpc.StatusRuntimeException e) {
                if (e.getStatus().getCode() != io.grpc.Status.Code.FAILED_PRECONDITION || attempt == 60) {
                    throw e;
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** One fio run; fio lays out a missing file itself (fallocate, then the job's writes). */
    private Result fio(Target t, Job job) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("fio", "--name=" + job.rw(), "--filename=" + t.file(), "--rw=" + job.rw(),
                "--bs=" + job.bs(), "--iodepth=" + job.depth(), "--direct=1", "--ioengine=libaio", "--time_based",
                "--runtime=" + seconds, "--size=" + fileBytes, "--output-format=json", "--randrepeat=0", "--norandommap"));
        long[] before = cpuTicks();
        JsonNode j = json.readTree(Bench.SHELL.run(cmd.toArray(String[]::new))).path("jobs").path(0);
        long[] after = cpuTicks();
        JsonNode side = job.rw().contains("write") ? j.path("write") : j.path("read");
        JsonNode pct = side.path("clat_ns").path("percentile");
        double ios = side.path("total_ios").asDouble();
        double busyUs = (after[0] - before[0]) * 1e6 / TICKS_PER_SECOND;
        return new Result(side.path("iops").asDouble(), side.path("bw").asDouble() * 1024 / 1e6, pct.path("50.000000").asDouble() / 1e3,
                pct.path("99.000000").asDouble() / 1e3, ios > 0 ? busyUs / ios : Double.NaN);
    }

    /** USER_HZ: /proc/stat counts in it (100 on every Linux architecture Debian builds). */
    private static final double TICKS_PER_SECOND = 100;

    /** Busy ticks of all CPUs (every column of /proc/stat's "cpu" line but idle and iowait), and all ticks. */
    private static long[] cpuTicks() throws java.io.IOException {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        long busy = 0;
        long all = 0;
        for (int i = 1; i < f.length && i <= 8; i++) { // user nice system idle iowait irq softirq steal
            long v = Long.parseLong(f[i]);
            all += v;
            if (i != 4 && i != 5) {
                busy += v;
            }
        }
        return new long[] { busy, all };
    }

    /** One row: medians over the rounds (min-max of IOPS), the median ratio to the baseline, CPU per I/O. */
    private void report(String row, Series s) {
        List<Double> iops = s.results.stream().map(Result::iops).sorted().toList();
        String line = String.format("%.0f IOPS (%.0f-%.0f), %.1f MB/s, p50 %.0f us, p99 %.0f us, %.2fx the host, CPU %.1f us/IO, %d rounds",
                median(iops), iops.get(0), iops.get(iops.size() - 1), median(s.results.stream().map(Result::mbps).toList()),
                median(s.results.stream().map(Result::p50us).toList()), median(s.results.stream().map(Result::p99us).toList()),
                median(s.ratios), median(s.results.stream().map(Result::cpuUsPerIo).toList()), iops.size());
        bench.row("6 io", row, line, "");
    }

    static double median(List<Double> values) {
        List<Double> v = values.stream().sorted().toList();
        int n = v.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static VolumeCapability fs(String type) {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType(type))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    private static VolumeCapability blockCap() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }
}
