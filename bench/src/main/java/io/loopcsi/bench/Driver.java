package io.loopcsi.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import csi.v1.IdentityGrpc;
import csi.v1.ProbeRequest;
import io.grpc.ManagedChannel;
import io.loopcsi.cli.CsiChannels;
import io.loopcsi.csi.Endpoint;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.KernelCleanup;

/**
 * The packaged driver as a process, started through the launcher (./loopcsi standalone) exactly
 * as an operator runs it; JAVA_HOME and JAVA_OPTS pick the JDK and add options (CDS/AOT).
 */
final class Driver implements AutoCloseable {

    final Process process;
    final Path dir;
    final Path socket;
    final Path log;
    /** Nanoseconds from process start to the first successful Probe. */
    long readyNanos;

    private Driver(Process process, Path dir, Path socket, Path log) {
        this.process = process;
        this.dir = dir;
        this.socket = socket;
        this.log = log;
    }

    /** Starts the driver on dir/pool, serving dir/csi.sock, and waits for its first successful Probe. */
    static Driver start(Path launcher, Path dir, String javaHome, String javaOpts, String logName) throws Exception {
        return start(launcher, dir, javaHome, javaOpts, logName, false);
    }

    /** launcherArchive: the launcher's own class-data archive (LOOPCSI_CDS on), else only what javaOpts name. */
    static Driver start(Path launcher, Path dir, String javaHome, String javaOpts, String logName, boolean launcherArchive)
            throws Exception {
        Path socket = dir.resolve("csi.sock");
        Path log = dir.resolve(logName);
        List<String> cmd = new ArrayList<>(List.of(launcher.toString(), "standalone", "--endpoint", "unix://" + socket,
                "--data-dir", dir.resolve("pool").toString(), "--capacity", "2000Gi", "--node-id", "bench",
                "--allowed-roots", dir.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        if (javaHome != null) {
            env.put("JAVA_HOME", javaHome);
        } else {
            env.remove("JAVA_HOME");
        }
        env.put("JAVA_OPTS", javaOpts == null ? "" : javaOpts);
        // the JVM options say which archive, if any, unless the launcher's own is what is measured
        env.put("LOOPCSI_CDS", launcherArchive ? "on" : "off");
        String app = System.getenv("BENCH_APP");
        if (app != null && !app.isBlank()) {
            env.put("LOOPCSI_APP", Path.of(app).toAbsolutePath().toString()); // a saved build, e.g. the one before a change
        }
        long t0 = System.nanoTime();
        Process p = pb.start();
        Driver d = new Driver(p, dir, socket, log);
        d.awaitReady(t0);
        return d;
    }

    private void awaitReady(long t0) throws Exception {
        long deadline = t0 + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("driver exited with " + process.exitValue() + ":\n" + log());
            }
            if (Files.exists(socket)) {
                ManagedChannel ch = CsiChannels.open(Endpoint.parse("unix://" + socket));
                try {
                    if (IdentityGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS)
                            .probe(ProbeRequest.getDefaultInstance()).getReady().getValue()) {
                        readyNanos = System.nanoTime() - t0;
                        return;
                    }
                } catch (RuntimeException notYet) {
                    // not serving yet
                } finally {
                    ch.shutdownNow();
                }
            }
            Thread.sleep(2);
        }
        throw new IllegalStateException("driver not ready after 120 s:\n" + log());
    }

    long pid() {
        return process.pid();
    }

    /** VmRSS and VmHWM of the driver in KiB (from /proc/PID/status). */
    long[] rssKib() {
        long rss = -1;
        long hwm = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
                } else if (line.startsWith("VmHWM:")) {
                    hwm = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            // gone
        }
        return new long[] { rss, hwm };
    }

    /** The driver's CPU so far in clock ticks: {utime + stime, cutime + cstime} from /proc/PID/stat. */
    long[] cpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid() + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // f[0] is field 3 (state)
        return new long[] { Long.parseLong(f[11]) + Long.parseLong(f[12]), Long.parseLong(f[13]) + Long.parseLong(f[14]) };
    }

    CsiClient client() {
        return new CsiClient(socket);
    }

    /** SIGTERM and wait (what a rolling restart does). */
    void terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log)";
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
