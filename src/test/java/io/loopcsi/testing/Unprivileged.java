package io.loopcsi.testing;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What another user on the node can do: commands run as nobody:nogroup with no supplementary
 * groups (setpriv), as a non-root process sharing the host's filesystem would.
 */
public final class Unprivileged {

    private Unprivileged() {
    }

    public record Result(int exit, String output) {
    }

    public static Result run(String... cmd) {
        List<String> all = new ArrayList<>(List.of("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
        all.addAll(List.of(cmd));
        try {
            Process p = new ProcessBuilder(all).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("still running: " + all);
            }
            return new Result(p.exitValue(), out.strip());
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + all + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Reading the first byte of file as nobody; exit 0 when it could. */
    public static Result read(Path file) {
        return run("head", "-c", "1", file.toString());
    }

    /** Connecting to a unix socket as nobody (this class's main, in a JVM of nobody's); exit 0 when it could. */
    public static Result connect(Path socket) {
        return run(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:-UsePerfData", "-Xshare:auto",
                "-cp", Path.of("target/test-classes").toAbsolutePath().toString(), Unprivileged.class.getName(), socket.toString());
    }

    /** Connects to the socket named by args[0]: prints "connected" (exit 0) or why not (exit 1). */
    public static void main(String[] args) {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(args[0]));
            System.out.println("connected");
        } catch (IOException e) {
            System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            System.exit(1);
        }
    }
}
