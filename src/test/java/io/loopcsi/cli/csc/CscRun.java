package io.loopcsi.cli.csc;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** One in-process csc invocation: its exit status and everything it printed. */
record CscRun(int status, String out, String err) {

    static CscRun run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Csc.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CscRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Without CSI_ENDPOINT: the command line alone decides. */
    static CscRun run(String... args) {
        return run(Map.of(), args);
    }

    List<String> lines() {
        return out.isEmpty() ? List.of() : List.of(out.split("\n"));
    }

    @Override
    public String toString() {
        return "exit " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
}
