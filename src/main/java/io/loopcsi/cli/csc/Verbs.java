package io.loopcsi.cli.csc;

import java.util.ArrayList;
import java.util.List;

/** All verbs by service, lookup by name or alias, and the usage texts generated from them. */
final class Verbs {

    static final List<String> SERVICES = List.of("identity", "controller", "group", "node");

    private static final List<Verb> ALL = all();

    private Verbs() {
    }

    private static List<Verb> all() {
        List<Verb> verbs = new ArrayList<>(IdentityVerbs.all());
        verbs.addAll(ControllerVerbs.all());
        verbs.addAll(GroupVerbs.all());
        verbs.addAll(NodeVerbs.all());
        return List.copyOf(verbs);
    }

    static List<Verb> of(String service) {
        return ALL.stream().filter(v -> v.service().equals(service)).toList();
    }

    static Verb find(String service, String word) throws UsageException {
        for (Verb v : of(service)) {
            if (v.answersTo(word)) {
                return v;
            }
        }
        throw new UsageException("unknown " + service + " verb '" + word + "'; one of: "
                + String.join(", ", of(service).stream().map(Verb::name).toList()));
    }

    static String usage() {
        StringBuilder b = new StringBuilder("""
                usage: loopcsi csc SERVICE VERB [ARGS...] [FLAGS]

                A CSI client with csc's verbs, flags and output: one line per result on stdout,
                errors on stderr, exit status 0 or the gRPC status code (64: usage error).

                """);
        for (String s : SERVICES) {
            b.append(serviceVerbs(s)).append('\n');
        }
        b.append("global flags:\n");
        Flag.GLOBAL.forEach(f -> b.append(flagLine(f)));
        return b.append("\n'loopcsi csc SERVICE VERB --help' shows a verb's arguments and flags.\n").toString();
    }

    static String usage(String service) {
        return "usage: loopcsi csc " + service + " VERB [ARGS...] [FLAGS]\n\n" + serviceVerbs(service);
    }

    static String usage(Verb v) {
        StringBuilder b = new StringBuilder("usage: loopcsi csc ").append(v.fullName())
                .append(v.argsUsage().isEmpty() ? "" : " " + v.argsUsage()).append(" [FLAGS]\n\n")
                .append("invokes the rpc ").append(v.rpc()).append('\n');
        if (!v.aliases().isEmpty()) {
            b.append("aliases: ").append(String.join(", ", v.aliases())).append('\n');
        }
        b.append("\nflags:\n");
        for (Flag f : v.flags()) {
            b.append(flagLine(f));
        }
        return b.toString();
    }

    private static String serviceVerbs(String service) {
        StringBuilder b = new StringBuilder(service).append(" verbs:\n");
        for (Verb v : of(service)) {
            String call = v.name() + (v.argsUsage().isEmpty() ? "" : " " + v.argsUsage());
            b.append(String.format("  %-46s %s%n", call, v.aliases().isEmpty() ? "" : "(" + String.join(", ", v.aliases()) + ")"));
        }
        return b.toString();
    }

    private static String flagLine(Flag f) {
        String names = String.join(", ", f.names) + (f.takesValue ? " " + f.valueName : "");
        return String.format("  %-46s %s%n", names, f.help);
    }
}
