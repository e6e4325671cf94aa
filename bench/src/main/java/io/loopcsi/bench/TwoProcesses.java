package io.loopcsi.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.transfer.tls.NodeKeys;

/**
 * The transfer as two nodes make it, each with a processor of its own: node x's server in a JVM of
 * its own ({@link TransferSourceProcess}) pinned to CPU 0, node y's client in the bench's JVM
 * pinned to CPU 1 ({@code taskset}; the bench's every thread, JIT and GC included), over TCP on
 * loopback. The in-process rows have both ends share every processor, where the scheduler keeps
 * them waiting on each other (perf sched: a third of both processors idle while the two event
 * loops queued on one); here each end runs on its own, as on two one-processor nodes. Skipped on
 * a machine with one processor. The pinning ends with the rows: the bench's threads get every
 * processor back.
 */
final class TwoProcesses {

    private final TransferBench bench;
    private final Path pool;
    private final Path src;
    private final NodeKeys yKeys;
    private final PoolDirectory y;
    private final long allocated;

    TwoProcesses(TransferBench bench, Path pool, Path src, NodeKeys yKeys, PoolDirectory y, long allocated) {
        this.bench = bench;
        this.pool = pool;
        this.src = src;
        this.yKeys = yKeys;
        this.y = y;
        this.allocated = allocated;
    }

    /** Rows of the two processes' steady state, against cp's rate ({@code cpRate}, MiB/s) measured before. */
    void run(double cpRate) throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        String label = "two processes, one processor each (taskset: node x's server in a JVM of its own on CPU 0, node y's client here on"
                + " CPU 1)";
        if (cpus < 2) {
            bench.bench.row(TransferBench.B, label, "skipped: 1 processor", "");
            return;
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder("taskset", "-c", "0", java, "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                "-Dorg.jboss.logging.provider=jdk", TransferSourceProcess.class.getName(), pool.toString(), TransferBench.SRC,
                yKeys.fingerprint()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        long self = ProcessHandle.current().pid();
        try {
            String ready = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)).readLine();
            if (ready == null || !ready.startsWith("READY ")) {
                throw new IllegalStateException("the source process did not start: " + ready);
            }
            String[] f = ready.split(" ");
            long ticks = Long.parseLong(Bench.SHELL.run("getconf", "CLK_TCK").strip());
            TransferBench.Source source = new TransferBench.Source(Integer.parseInt(f[1]), f[2],
                    () -> cpuNanos(Path.of("/proc/" + child.pid()), ticks), () -> compilerNanos(child.pid(), ticks));
            Bench.SHELL.run("taskset", "-a", "-p", "-c", "1", Long.toString(self));
            try {
                // untimed until both JITs settled (compiled for less than a tenth of a transfer), at least 3
                int warm = 0;
                TransferBench.Sent w;
                do {
                    w = bench.transfer(src, source, yKeys, y, "2p-warm" + warm, allocated);
                    warm++;
                } while ((warm < 3 || Math.max(w.jitSeconds(), w.sourceJitSeconds()) > 0.1 * w.seconds()) && warm < 3 + bench.warmMax);
                int rounds = bench.rounds;
                double[] secs = new double[rounds];
                double[] srcCpu = new double[rounds];
                double[] dstCpu = new double[rounds];
                for (int i = 0; i < rounds; i++) {
                    TransferBench.Sent s = bench.transfer(src, source, yKeys, y, "2p-r" + i, allocated);
                    secs[i] = s.seconds();
                    srcCpu[i] = Math.max(0, s.sourceCpuSeconds() - s.sourceJitSeconds());
                    dstCpu[i] = Math.max(0, s.cpuSeconds() - s.jitSeconds());
                }
                double mib = allocated / (double) Bench.MIB;
                double rate = mib / Bench.median(secs);
                String n = " (median of " + rounds + ", after " + warm + " untimed)";
                bench.bench.row(TransferBench.B, label + n, rate, "MiB/s");
                bench.bench.row(TransferBench.B, "  its ratio over cp's rate above (goal >= 0.8)", String.format("%.2f", rate / cpRate), "x");
                bench.bench.row(TransferBench.B, "  CPU per MiB allocated: node x's process / node y's (each without its JIT compilers')" + n,
                        String.format("%.2f / %.2f", 1000 * Bench.median(srcCpu) / mib, 1000 * Bench.median(dstCpu) / mib), "ms");
            } finally {
                Bench.SHELL.run("taskset", "-a", "-p", "-c", "0-" + (cpus - 1), Long.toString(self));
            }
        } finally {
            child.getOutputStream().close();
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor();
            }
        }
    }

    /** User + system CPU nanoseconds of a process or thread so far (its /proc stat, fields 14 and 15, in clock ticks). */
    static long cpuNanos(Path proc, long ticksPerSecond) {
        try {
            String stat = Files.readString(proc.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 1_000_000_000L / ticksPerSecond;
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot read the CPU time of " + proc + ": " + e.getMessage(), e);
        }
    }

    /** CPU nanoseconds of a JVM's JIT compiler threads so far (named "C1 CompilerThread..." and "C2 CompilerThread..."). */
    static long compilerNanos(long pid, long ticksPerSecond) {
        long total = 0;
        try (var threads = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : threads.toList()) {
                try {
                    if (Files.readString(t.resolve("comm")).contains("CompilerThre")) {
                        total += cpuNanos(t, ticksPerSecond);
                    }
                } catch (java.io.IOException | IllegalStateException e) {
                    // a compiler thread that ended meanwhile: its time is lost to the count, not to the transfer
                }
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot list the threads of process " + pid + ": " + e.getMessage(), e);
        }
        return total;
    }
}
