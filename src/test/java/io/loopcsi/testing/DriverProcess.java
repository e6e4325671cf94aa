package io.loopcsi.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import csi.v1.ProbeRequest;
import io.grpc.StatusRuntimeException;

/**
 * The packaged driver (target/quarkus-app, or with LOOPCSI_RUNTIME=native the native executable
 * through the launcher: {@link Runtimes}) as a separate process, as an operator would run it:
 * `standalone` on a unix socket in dir, pool in dir/pool. Tests kill it (SIGKILL, as a crash or
 * power cut), stop it (SIGTERM) and start it again on the same pool.
 */
public final class DriverProcess implements AutoCloseable {

    private static int starts;
    private final Process process;
    private final Path log;
    public final Path socket;
    public final io.loopcsi.csi.Endpoint endpoint;

    private DriverProcess(Process process, Path log, io.loopcsi.csi.Endpoint endpoint) {
        this.process = process;
        this.log = log;
        this.endpoint = endpoint;
        this.socket = endpoint.socket();
    }

    public static DriverProcess start(Path dir, String... jvmProps) throws Exception {
        return startOn(dir, "unix://" + dir.resolve("csi.sock"), jvmProps);
    }

    /** The driver serving on endpoint (unix:///PATH or tcp://HOST:PORT), pool in dir/pool. */
    public static DriverProcess startOn(Path dir, String endpoint, String... jvmProps) throws Exception {
        return start(dir, endpoint, dir.resolve("pool"), null, jvmProps);
    }

    /** The driver on a unix socket in dir, pool in dir/pool, with more launcher flags (e.g. --metrics-address). */
    public static DriverProcess startWithFlags(Path dir, List<String> flags) throws Exception {
        Path log = dir.resolve("driver-" + (++starts) + ".log");
        List<String> cmd = command("unix://" + dir.resolve("csi.sock"), dir.resolve("pool"), null);
        cmd.addAll(flags);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        DriverProcess d = new DriverProcess(p, log, io.loopcsi.csi.Endpoint.parse("unix://" + dir.resolve("csi.sock")));
        d.awaitReady();
        return d;
    }

    /**
     * A driver serving socket with its pool in pool, started under umask (e.g. "000"; null: this
     * JVM's) through a shell, as `umask 000; ./loopcsi ...` would; its log goes to dir.
     */
    public static DriverProcess start(Path dir, Path socket, Path pool, String umask, String... jvmProps) throws Exception {
        return start(dir, "unix://" + socket, pool, umask, jvmProps);
    }

    private static DriverProcess start(Path dir, String endpoint, Path pool, String umask, String... jvmProps) throws Exception {
        Path log = dir.resolve("driver-" + (++starts) + ".log");
        Process p = new ProcessBuilder(command(endpoint, pool, umask, jvmProps)).redirectErrorStream(true).redirectOutput(log.toFile())
                .start();
        DriverProcess d = new DriverProcess(p, log, io.loopcsi.csi.Endpoint.parse(endpoint));
        d.awaitReady();
        return d;
    }

    /** What a driver that stopped by itself said (stdout and stderr) and its exit code. */
    public record Exit(int code, String output) {
    }

    /** Starts a driver expected to stop by itself at start (e.g. refused); its exit code and output. */
    public static Exit runToExit(Path socket, Path pool) throws Exception {
        Process p = new ProcessBuilder(command("unix://" + socket, pool, null)).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("driver still running:\n" + new String(out));
        }
        return new Exit(p.exitValue(), new String(out));
    }

    private static List<String> command(String endpoint, Path pool, String umask, String... jvmProps) {
        Runtimes.requireBuilt();
        List<String> cmd = new ArrayList<>();
        if (umask != null) {
            cmd.addAll(List.of("sh", "-c", "umask " + umask + " && exec \"$0\" \"$@\""));
        }
        if (Runtimes.isNative()) {
            // the launcher runs the native executable (LOOPCSI_RUNTIME=native, inherited), which
            // takes -Dkey=value before the role as the JVM does
            cmd.addAll(List.of("bash", Runtimes.launcher().toString()));
            cmd.addAll(List.of(jvmProps));
            cmd.add("standalone");
        } else {
            Path jar = Path.of("target/quarkus-app/quarkus-run.jar").toAbsolutePath();
            cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:+UseSerialGC"));
            cmd.addAll(List.of(jvmProps));
            cmd.addAll(List.of("-jar", jar.toString(), "standalone"));
        }
        cmd.addAll(List.of("--endpoint", endpoint,
                "--data-dir", pool.toString(), "--capacity", "20Gi", "--node-id", "it-node"));
        return cmd;
    }

    public long pid() {
        return process.pid();
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("driver exited with " + process.exitValue() + ":\n" + log());
            }
            if (socket == null || Files.exists(socket)) {
                try (CsiClient c = new CsiClient(endpoint)) {
                    if (c.identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue()) {
                        return;
                    }
                } catch (StatusRuntimeException notYet) {
                    // not serving yet
                }
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("driver not ready after 60 s:\n" + log());
    }

    public CsiClient client() {
        return new CsiClient(endpoint);
    }

    /** SIGKILL: what a crash or a power cut leaves. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, then waits for the exit; returns the exit code. */
    public int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("driver did not stop within 60 s of SIGTERM");
        }
        return process.exitValue();
    }

    /** Waits for the process to end by itself (a fail point halts it); returns the exit code. */
    public int awaitExit() throws InterruptedException {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("driver still running");
        }
        return process.exitValue();
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
