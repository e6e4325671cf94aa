package io.loopcsi.engine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

/**
 * The one way the engine runs an external command (losetup, mkfs.xfs, xfs_growfs, blkid,
 * mount...): no shell, a timeout after which the process is killed, stdout and stderr captured.
 * A failure carries the command's stderr so that it reaches the caller's error message.
 */
public class CommandRunner {

    private static final Logger LOG = Logger.getLogger(CommandRunner.class);

    public record Result(int exitCode, String stdout, String stderr) {
        public boolean ok() {
            return exitCode == 0;
        }
    }

    /** Why a command failed: a non-zero exit where run() wanted 0, killed after the timeout, or could not start. */
    public enum Failure { EXIT, TIMEOUT, START }

    /** Told about every command (metrics); must be cheap and must not throw. */
    public interface Observer {
        /** The command ran to its end (whatever its exit code: exec()'s callers judge that), or was killed. */
        void ran(String program, long nanos);

        void failed(String program, Failure why);
    }

    /** Observes nothing: where no metrics are served. */
    public static final Observer NONE = new Observer() {
        @Override
        public void ran(String program, long nanos) {
        }

        @Override
        public void failed(String program, Failure why) {
        }
    };

    private final Duration timeout;
    private final Observer observer;
    // Pipe readers: both pipes are read concurrently so a chatty command cannot block on a full
    // pipe. Created per runner (never at class init, which a native image would freeze).
    private final ExecutorService pipes = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "command-pipe");
        t.setDaemon(true);
        return t;
    });

    public CommandRunner(Duration timeout) {
        this(timeout, NONE);
    }

    public CommandRunner(Duration timeout, Observer observer) {
        this.timeout = timeout;
        this.observer = observer;
    }

    /** Runs the command and returns its stdout; a non-zero exit or a timeout throws. */
    public String run(String... command) {
        Result r = exec(command);
        if (!r.ok()) {
            observer.failed(command[0], Failure.EXIT);
            throw failure(r, command);
        }
        return r.stdout();
    }

    /** Runs the command and returns whatever it did; only a failure to start or a timeout throws. */
    public Result exec(String... command) {
        List<String> cmd = List.of(command);
        long start = System.nanoTime();
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        } catch (IOException e) {
            observer.failed(command[0], Failure.START);
            throw EngineException.internal("cannot run " + command[0] + ": " + e.getMessage(), e);
        }
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                observer.ran(command[0], System.nanoTime() - start);
                observer.failed(command[0], Failure.TIMEOUT);
                throw EngineException.internal(String.join(" ", cmd) + " did not finish within " + timeout.toSeconds()
                        + "s and was killed", null);
            }
            Result r = new Result(p.exitValue(), out.join(), err.join());
            observer.ran(command[0], System.nanoTime() - start);
            if (LOG.isDebugEnabled()) {
                LOG.debugf("%s -> %d in %d ms", String.join(" ", cmd), r.exitCode(), (System.nanoTime() - start) / 1_000_000);
            }
            return r;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new EngineException(EngineException.Kind.ABORTED, String.join(" ", cmd) + " interrupted", e);
        }
    }

    public static EngineException failure(Result r, String... command) {
        String why = r.stderr().isBlank() ? r.stdout().strip() : r.stderr().strip();
        return EngineException.internal(command[0] + " failed (exit " + r.exitCode() + "): " + why, null);
    }

    private CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }, pipes);
    }
}
