package io.loopcsi.operator.kube;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A kube-testenv API server of a test's own (the shared one of .ci/kube-test.sh must survive
 * the test): {@code kube-testenv up}, and {@code down} however the test ends.
 */
final class ThrowawayCluster implements AutoCloseable {

    private static final Pattern EXPORT = Pattern.compile("export (KUBE_TESTENV_DIR|KUBECONFIG)=(\\S+)");
    final Path dir;
    final Path kubeconfig;
    private boolean down;

    private ThrowawayCluster(Path dir, Path kubeconfig) {
        this.dir = dir;
        this.kubeconfig = kubeconfig;
    }

    /** The kube-testenv script beside the clone ($KUBE_TESTENV, else ../shared/tools/kube-testenv), or null. */
    static Path tool() {
        String t = System.getenv("KUBE_TESTENV");
        Path p = Path.of(t == null || t.isBlank() ? "../shared/tools/kube-testenv" : t);
        return Files.isRegularFile(p) ? p : null;
    }

    static ThrowawayCluster up() throws IOException, InterruptedException {
        String out = run("up");
        Path dir = null;
        Path kubeconfig = null;
        Matcher m = EXPORT.matcher(out);
        while (m.find()) {
            if (m.group(1).equals("KUBECONFIG")) {
                kubeconfig = Path.of(m.group(2));
            } else {
                dir = Path.of(m.group(2));
            }
        }
        if (dir == null || kubeconfig == null) {
            throw new IllegalStateException("kube-testenv up printed no KUBECONFIG: " + out);
        }
        return new ThrowawayCluster(dir, kubeconfig);
    }

    /** kubectl against this cluster; fails with kubectl's output unless it exits 0. */
    String kubectl(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--kubeconfig";
        all[1] = kubeconfig.toString();
        System.arraycopy(args, 0, all, 2, args.length);
        return Kubectl.ok(all);
    }

    /** Stops etcd and the API server (idempotent). */
    void down() throws IOException, InterruptedException {
        if (!down) {
            down = true;
            run("down", dir.toString());
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        down();
    }

    private static String run(String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile("kube-testenv", ".out");
        try {
            String[] cmd = new String[args.length + 2];
            cmd[0] = "bash";
            cmd[1] = tool().toString();
            System.arraycopy(args, 0, cmd, 2, args.length);
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("kube-testenv " + String.join(" ", args) + " timed out");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("kube-testenv " + String.join(" ", args) + " exited " + p.exitValue() + ": " + text);
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
