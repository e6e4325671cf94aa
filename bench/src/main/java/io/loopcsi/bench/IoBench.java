package io.loopcsi.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * plain directory of the pool's host filesystem as the baseline. Jobs are interleaved: each job
 * runs on every target before the next job, so a noisy disk hurts all targets alike. Every row also
 * gives its ratio to the baseline.
 */
final class IoBench {

    /** One fio job: name, rw mode, block size, queue depth. */
    record Job(String name, String rw, String bs, int depth) {
    }

    /** Sequential write first: every file is written before the random jobs ("written", not fresh). */
    static final List<Job> JOBS = List.of(new Job("seqwrite 1M qd8", "write", "1M", 8), new Job("seqread 1M qd8", "read", "1M", 8),
            new Job("randread 4k qd1", "randread", "4k", 1), new Job("randread 4k qd32", "randread", "4k", 32),
            new Job("randwrite 4k qd1", "randwrite", "4k", 1), new Job("randwrite 4k qd32", "randwrite", "4k", 32));

    /** What fio measured. */
    record Result(double iops, double mbps, double p50us, double p99us) {
    }

    /** Where fio runs: a file in a directory, or a device; for volumes, the volume and its capability. */
    record Target(String name, Path file, String volumeId, VolumeCapability cap) {
    }

    private final Bench bench;
    private final int seconds = Integer.parseInt(Bench.env("BENCH_IO_SECONDS", "8"));
    private final long fileBytes = Long.parseLong(Bench.env("BENCH_IO_MIB", "1024")) * Bench.MIB;
    private final ObjectMapper json = new ObjectMapper();

    IoBench(Bench bench) {
        this.bench = bench;
    }

    void run(Path dir) throws Exception {
        Bench.SHELL.run("fio", "--version"); // fails with the command's own message when fio is missing
        try (Driver d = Driver.start(bench.launcher, dir, null, "", "driver.log"); CsiClient c = d.client()) {
            Files.createDirectories(dir.resolve("host"));
            Target host = new Target("host directory (baseline)", dir.resolve("host/fio.dat"), null, null);
            List<Target> volumes = new ArrayList<>();
            volumes.add(volume(c, dir, "thin xfs", fs("xfs"), Map.of()));
            volumes.add(volume(c, dir, "thick xfs", fs("xfs"), Map.of("provisioning", "thick")));
            volumes.add(volume(c, dir, "thin ext4", fs("ext4"), Map.of()));
            volumes.add(volume(c, dir, "block", blockCap(), Map.of()));

            // the first-write penalty: random writes into a fresh thin image (every write allocates a host block), and into a thick one
            Result fresh = fio(volumes.get(0), new Job("randwrite 4k qd32", "randwrite", "4k", 32));
            Result thickFresh = fio(volumes.get(1), new Job("randwrite 4k qd32", "randwrite", "4k", 32));
            Result hostFresh = fio(host, new Job("randwrite 4k qd32", "randwrite", "4k", 32));
            report("randwrite 4k qd32", "thin xfs, fresh image, dio on", fresh, hostFresh);
            report("randwrite 4k qd32", "thick xfs, fresh image, dio on", thickFresh, hostFresh);

            for (Job job : JOBS) {
                Result base = fio(host, job);
                report(job.name(), host.name(), base, base);
                for (String dio : List.of("on", "off")) {
                    for (Target v : volumes) {
                        setDirectIo(c, v, dio);
                        report(job.name(), v.name() + ", dio " + dio, fio(v, job), base);
                    }
                }
            }
            for (Target v : volumes) {
                release(c, v, dir);
            }
        }
    }

    private Target volume(CsiClient c, Path dir, String name, VolumeCapability cap, Map<String, String> mutable) {
        String tag = name.replace(' ', '-');
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

    private static void release(CsiClient c, Target v, Path dir) {
        String tag = v.name().replace(' ', '-');
        c.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v.volumeId())
                .setTargetPath(dir.resolve("target-" + tag).toString()).build());
        c.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v.volumeId())
                .setStagingTargetPath(dir.resolve("staging-" + tag).toString()).build());
        c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.volumeId()).build());
    }

    /** One fio run; fio lays out a missing file itself (fallocate, then the job's writes). */
    private Result fio(Target t, Job job) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("fio", "--name=" + job.rw(), "--filename=" + t.file(), "--rw=" + job.rw(),
                "--bs=" + job.bs(), "--iodepth=" + job.depth(), "--direct=1", "--ioengine=libaio", "--time_based",
                "--runtime=" + seconds, "--size=" + fileBytes, "--output-format=json", "--randrepeat=0", "--norandommap"));
        JsonNode j = json.readTree(Bench.SHELL.run(cmd.toArray(String[]::new))).path("jobs").path(0);
        JsonNode side = job.rw().contains("write") ? j.path("write") : j.path("read");
        JsonNode pct = side.path("clat_ns").path("percentile");
        return new Result(side.path("iops").asDouble(), side.path("bw").asDouble() * 1024 / 1e6, pct.path("50.000000").asDouble() / 1e3,
                pct.path("99.000000").asDouble() / 1e3);
    }

    private void report(String job, String target, Result r, Result base) {
        String line = String.format("%.0f IOPS, %.1f MB/s, p50 %.0f us, p99 %.0f us, %.2fx the host", r.iops(), r.mbps(), r.p50us(),
                r.p99us(), base.iops() > 0 ? r.iops() / base.iops() : Double.NaN);
        bench.row("6 io", job + ": " + target, line, "");
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
