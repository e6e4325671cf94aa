package io.loopcsi.cli.csc;

import java.io.FileNotFoundException;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.csi.Endpoint;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;

/**
 * {@code loopcsi csc SERVICE VERB [ARGS...] [FLAGS]}: a CSI client compatible with GoCSI's csc.
 * A plain entry point: it boots no Quarkus and no CDI, so a call costs a JVM start and one RPC.
 *
 * <p>Contract: results on stdout, one line per result (or one JSON document per response with
 * {@code --format json}); nothing else on stdout. Exit status 0 when every call succeeded, the
 * gRPC status code of the first failed call (its name and message on stderr), {@value #EXIT_USAGE}
 * for a command line that cannot be sent (nothing was sent), {@value #EXIT_INTERNAL} for a
 * client-side failure.
 */
public final class Csc {

    /** BSD sysexits' EX_USAGE, as the launcher's other roles use it; above every gRPC code (0-16). */
    public static final int EXIT_USAGE = 64;
    /** EX_SOFTWARE: the client itself failed (no gRPC status to report). */
    public static final int EXIT_INTERNAL = 70;

    private Csc() {
    }

    public static void main(String[] args) {
        quietLibraryLogging();
        int status = run(args, System.out, System.err);
        // netty's event loop threads are not daemons: leave without waiting for them
        System.exit(status);
    }

    /** Runs one command line with the process environment; see the class comment for the contract. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, System.getenv(), out, err);
    }

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (List.of(args).contains("--version")) {
            out.print(io.loopcsi.cli.Version.text());
            out.flush();
            return 0;
        }
        try {
            return dispatch(CommandLine.parse(List.of(args)), env, out, err);
        } catch (UsageException e) {
            err.println("loopcsi csc: " + e.getMessage());
            err.println("Run 'loopcsi csc --help' or 'loopcsi csc SERVICE VERB --help' for usage.");
            return EXIT_USAGE;
        } catch (RuntimeException e) {
            err.println("loopcsi csc: " + e);
            return EXIT_INTERNAL;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private static int dispatch(CommandLine line, Map<String, String> env, PrintStream out, PrintStream err) throws UsageException {
        List<String> words = line.positionals();
        boolean help = line.isOn(Flag.HELP);
        if (words.isEmpty()) {
            if (!help) {
                throw new UsageException("missing SERVICE: one of " + String.join(", ", Verbs.SERVICES));
            }
            out.print(Verbs.usage());
            return 0;
        }
        String service = words.get(0);
        if (!Verbs.SERVICES.contains(service)) {
            throw new UsageException("unknown service '" + service + "'; one of " + String.join(", ", Verbs.SERVICES));
        }
        if (words.size() == 1) {
            if (!help) {
                throw new UsageException("missing " + service + " VERB; one of: "
                        + String.join(", ", Verbs.of(service).stream().map(Verb::name).toList()));
            }
            out.print(Verbs.usage(service));
            return 0;
        }
        Verb verb = Verbs.find(service, words.get(1));
        if (help) {
            out.print(Verbs.usage(verb));
            return 0;
        }
        List<String> args = words.subList(2, words.size());
        verb.check(line, args);
        Options opt = Options.of(line, env);
        try (Connection csi = new Connection(opt.endpoint, opt.timeout)) {
            verb.action().run(new Verb.Call(args, opt, csi, new Output(out, opt.json)));
        } catch (StatusRuntimeException e) {
            err.println(describe(e.getStatus(), opt.endpoint));
            return e.getStatus().getCode().value();
        }
        return 0;
    }

    /**
     * {@code CODE_NAME: message}. A driver's status is shown as sent. gRPC's own message for a
     * transport failure ("io exception") is completed with the endpoint and the cause, which
     * says what went wrong (no socket file, connection refused).
     */
    static String describe(Status s, Endpoint endpoint) {
        String message = s.getDescription() == null ? "" : s.getDescription();
        Throwable cause = s.getCause();
        if (cause != null) {
            String why = cause instanceof FileNotFoundException ? "no such socket file"
                    : cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
            message = (message.isEmpty() ? "" : message + ": ") + endpoint + ": " + why;
        }
        return s.getCode() + (message.isEmpty() ? "" : ": " + message);
    }

    /**
     * Keeps library chatter off the terminal: netty would log through slf4j (whose provider is
     * not on the csc class path) and warns about channel options a unix socket ignores; grpc logs
     * through java.util.logging. Failures reach the user as gRPC statuses instead. Called by
     * {@link #main} only: in-process callers keep their own logging.
     */
    private static void quietLibraryLogging() {
        InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
        java.util.logging.Logger.getLogger("").setLevel(Level.OFF);
    }
}
