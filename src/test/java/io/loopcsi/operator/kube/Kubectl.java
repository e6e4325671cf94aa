package io.loopcsi.operator.kube;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the real kubectl ($KUBECTL, else kubectl on PATH) against $KUBECONFIG. */
public final class Kubectl {

    public record Result(int exit, String out) {
    }

    private Kubectl() {
    }

    public static String binary() {
        String k = System.getenv("KUBECTL");
        return k == null || k.isBlank() ? "kubectl" : k;
    }

    public static Result run(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary());
        cmd.addAll(List.of(args));
        try {
            Path out = Files.createTempFile("kubectl", ".out");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + cmd);
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            Files.deleteIfExists(out);
            return new Result(p.exitValue(), text);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + cmd + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Runs and fails with kubectl's output unless it exits 0. */
    public static String ok(String... args) {
        Result r = run(args);
        if (r.exit() != 0) {
            throw new AssertionError("kubectl " + String.join(" ", args) + " exited " + r.exit() + ": " + r.out());
        }
        return r.out();
    }

    public static String apply(String yaml) {
        return checked("apply", onFile("apply", yaml));
    }

    /** kubectl create: for objects named by generateName, which apply cannot make. */
    public static String create(String yaml) {
        return checked("create", onFile("create", yaml));
    }

    public static Result tryApply(String yaml) {
        return onFile("apply", yaml);
    }

    private static String checked(String verb, Result r) {
        if (r.exit() != 0) {
            throw new AssertionError("kubectl " + verb + " -f exited " + r.exit() + ": " + r.out());
        }
        return r.out();
    }

    /** kubectl VERB -f FILE, the manifest written to a temporary file. */
    private static Result onFile(String verb, String yaml) {
        try {
            Path f = Files.createTempFile("manifest", ".yaml");
            Files.writeString(f, yaml);
            try {
                return run(verb, "-f", f.toString());
            } finally {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
