package io.loopcsi.testing;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import csi.v1.GetPluginInfoRequest;
import io.grpc.StatusRuntimeException;

/**
 * The packaged launcher ({@code ./loopcsi ROLE FLAGS...}) as a process, as the README, --help and
 * the operator's pod specs run it; its output goes to a log file in the test's directory. It runs
 * the JVM build or, with LOOPCSI_RUNTIME=native in the environment, which it inherits, the native
 * executable ({@link Runtimes}).
 */
public final class Launcher implements AutoCloseable {

    private final Process process;
    private final Path log;

    private Launcher(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts ./loopcsi with args and extra environment in logDir (its working directory); output to logDir/NAME.log. */
    public static Launcher start(Path logDir, String name, List<String> args, Map<String, String> env) throws IOException {
        Path script = Runtimes.launcher();
        Runtimes.requireBuilt();
        List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
        cmd.addAll(args);
        Files.createDirectories(logDir);
        Path log = logDir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(logDir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        return new Launcher(pb.start(), log);
    }

    /** Runs ./loopcsi to its end (e.g. --help); returns exit code and output. */
    public static Result run(String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile("loopcsi", ".out");
        List<String> cmd = new ArrayList<>(List.of("bash", Path.of("loopcsi").toAbsolutePath().toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("timed out: " + cmd);
        }
        String text = Files.readString(out);
        Files.deleteIfExists(out);
        return new Result(p.exitValue(), text);
    }

    public record Result(int exit, String out) {
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Waits until the CSI socket answers GetPluginInfo. */
    public Launcher awaitCsi(Path socket) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            requireAlive();
            if (Files.exists(socket)) {
                try (CsiClient c = new CsiClient(socket)) {
                    c.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
                    return this;
                } catch (StatusRuntimeException notYet) {
                    // not serving yet
                }
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("no CSI on " + socket + " after 90 s:\n" + log());
    }

    /** Waits until GET http://address/path answers 200. */
    public Launcher awaitHttp(String address, String path) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            requireAlive();
            if (httpStatus(address, path) == 200) {
                return this;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("no 200 from http://" + address + path + " after 90 s:\n" + log());
    }

    public static int httpStatus(String address, String path) {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create("http://" + address + path).toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(5000);
            return c.getResponseCode();
        } catch (IOException e) {
            return -1;
        }
    }

    private void requireAlive() {
        if (!process.isAlive()) {
            throw new IllegalStateException("loopcsi exited with " + process.exitValue() + ":\n" + log());
        }
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Waits for the process to end by itself; its exit status (IllegalStateException after the timeout). */
    public int exitStatus(java.time.Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("loopcsi still running after " + timeout + ":\n" + log());
        }
        return process.exitValue();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM, then SIGKILL after 30 s; waits for the end. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** SIGKILL, as a machine that dies takes its processes with it; waits for the end. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop();
        }
    }
}
