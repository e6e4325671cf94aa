package io.loopcsi.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

import io.loopcsi.csi.Endpoint;
import io.loopcsi.engine.Sizes;

/**
 * Every flag of every role, one line each: which roles take it and what its value becomes.
 * Each value is checked here, before Quarkus starts, so that a bad one is one line naming the
 * flag (exit 64) rather than a stack trace from inside the application.
 */
final class Flags {

    static final String STANDALONE = "standalone", CONTROLLER = "controller", NODE = "node", OPERATOR = "operator",
            DOCTOR = "doctor";

    /** The roles the launcher runs in this JVM (csc is the launcher script's). */
    static final Set<String> ROLES = Set.of(STANDALONE, CONTROLLER, NODE, OPERATOR, DOCTOR);

    /**
     * A flag taking a value: the roles that accept it, and the properties its value sets
     * (IllegalArgumentException saying what is wrong with the value).
     */
    record Flag(String name, Set<String> roles, Function<String, Map<String, String>> properties) {
    }

    /** Flags without a value, in every role. */
    static final Set<String> SWITCHES = Set.of("--debug", "--version", "--help", "-h");

    static final List<Flag> ALL = List.of(
            new Flag("--endpoint", Set.of(STANDALONE, CONTROLLER, NODE), v -> Map.of("loopcsi.endpoint", Endpoint.parse(v).toString())),
            new Flag("--data-dir", Set.of(STANDALONE, NODE, DOCTOR), v -> Map.of("loopcsi.data-dir", path(v))),
            new Flag("--capacity", Set.of(STANDALONE, NODE, DOCTOR), v -> Map.of("loopcsi.capacity", size(v))),
            new Flag("--host-reserve", Set.of(STANDALONE, NODE), v -> Map.of("loopcsi.host-reserve", sizeOrZero(v))),
            new Flag("--thin-overcommit", Set.of(STANDALONE, NODE), v -> Map.of("loopcsi.thin-overcommit", ratio(v))),
            new Flag("--node-id", Set.of(STANDALONE), v -> Map.of("loopcsi.node-id", topologyValue(v))),
            new Flag("--node-name", Set.of(NODE), v -> Map.of("loopcsi.node-id", dnsName(v, 63))),
            new Flag("--driver-name", Set.of(STANDALONE, CONTROLLER, NODE), v -> Map.of("loopcsi.driver-name", driverName(v))),
            new Flag("--max-volumes", Set.of(STANDALONE, NODE), v -> Map.of("loopcsi.max-volumes-per-node", count(v))),
            new Flag("--allowed-roots", Set.of(STANDALONE, NODE), v -> Map.of("loopcsi.allowed-roots", paths(v))),
            new Flag("--pool", Set.of(CONTROLLER), v -> Map.of("loopcsi.controller.pool", dnsName(v, 63))),
            new Flag("--pool", Set.of(NODE), v -> Map.of("loopcsi.node.pool", dnsName(v, 63))),
            new Flag("--registration-socket", Set.of(NODE), v -> Map.of("loopcsi.node.registration-socket", path(v))),
            new Flag("--http-address", Set.of(CONTROLLER, NODE, OPERATOR), Flags::httpProperties),
            new Flag("--metrics-address", Set.of(STANDALONE), Flags::httpProperties),
            new Flag("--namespace", Set.of(OPERATOR), v -> Map.of("loopcsi.operator.namespace", dnsLabel(v))),
            new Flag("--format", Set.of(DOCTOR), v -> Map.of("loopcsi.doctor.format", oneOf(v, "table", "json"))),
            new Flag("--remove-orphan", Set.of(DOCTOR), v -> Map.of("loopcsi.doctor.remove-orphan", orphanId(v))));

    /** What a role's arguments say: the flags given (by name), the properties they set, the switches. */
    record Parsed(Map<String, String> given, Map<String, String> properties, Set<String> switches) {
        boolean has(String flag) {
            return given.containsKey(flag) || switches.contains(flag);
        }
    }

    /** A usage error: the message says which flag and why (exit 64). */
    static final class UsageError extends RuntimeException {
        UsageError(String message) {
            super(message);
        }
    }

    private Flags() {
    }

    /** The flags role takes, by name. */
    static Map<String, Flag> of(String role) {
        Map<String, Flag> m = new LinkedHashMap<>();
        for (Flag f : ALL) {
            if (f.roles().contains(role)) {
                m.put(f.name(), f);
            }
        }
        return m;
    }

    /**
     * Parses and checks {@code --flag VALUE} / {@code --flag=VALUE} arguments of role; a flag the
     * role does not take, a flag without a value or a bad value is a UsageError.
     */
    static Parsed parse(String role, List<String> args) {
        Map<String, Flag> flags = of(role);
        Map<String, String> given = new LinkedHashMap<>();
        Map<String, String> props = new LinkedHashMap<>();
        Set<String> switches = new java.util.LinkedHashSet<>();
        for (int i = 0; i < args.size(); i++) {
            String flag = args.get(i);
            String value = null;
            int eq = flag.indexOf('=');
            if (flag.startsWith("--") && eq > 0) {
                value = flag.substring(eq + 1);
                flag = flag.substring(0, eq);
            }
            if (SWITCHES.contains(flag) && value == null) {
                switches.add(flag);
                continue;
            }
            Flag f = flags.get(flag);
            if (f == null) {
                throw new UsageError((flag.startsWith("-") ? "unknown flag " + flag : "unexpected argument '" + flag + "'") + " for role "
                        + role + " (loopcsi --help lists the flags)");
            }
            if (value == null) {
                if (i + 1 >= args.size()) {
                    throw new UsageError(flag + " needs a value");
                }
                value = args.get(++i);
            }
            try {
                props.putAll(f.properties().apply(value));
            } catch (IllegalArgumentException e) {
                throw new UsageError(flag + ": " + e.getMessage());
            }
            given.put(flag, value);
        }
        return new Parsed(given, props, switches);
    }

    /** A path ("" or a NUL is not one). */
    static String path(String v) {
        if (v.isBlank()) {
            throw new IllegalArgumentException("empty path");
        }
        try {
            return Path.of(v).toString();
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("not a path: '" + v + "'");
        }
    }

    /** Comma-separated absolute paths. */
    static String paths(String v) {
        List<String> out = new ArrayList<>();
        for (String p : v.split(",", -1)) {
            if (!path(p.strip()).startsWith("/")) {
                throw new IllegalArgumentException("not an absolute path: '" + p.strip() + "' (use comma-separated absolute paths, e.g. /var/lib/kubelet)");
            }
            out.add(p.strip());
        }
        return String.join(",", out);
    }

    /** A size above zero: 20Gi, 500Mi, bytes. */
    static String size(String v) {
        if (Sizes.parse(v) <= 0) {
            throw new IllegalArgumentException("must be more than 0: '" + v + "'");
        }
        return v.strip();
    }

    /** A size, 0 allowed (a host reserve of none). */
    static String sizeOrZero(String v) {
        Sizes.parse(v);
        return v.strip();
    }

    /** An overcommit ratio: a decimal number from 1 (none) to 100. */
    static String ratio(String v) {
        try {
            double r = Double.parseDouble(v.strip());
            if (r >= 1 && r <= io.loopcsi.engine.CapacityPolicy.MAX_OVERCOMMIT && v.strip().matches("[0-9]+(\\.[0-9]+)?")) {
                return v.strip();
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("not a ratio from 1 to 100: '" + v + "' (e.g. 1.5: thin volumes may take 1.5x the capacity)");
    }

    /** A whole number, 0 or more. */
    static String count(String v) {
        try {
            long n = Long.parseLong(v.strip());
            if (n >= 0) {
                return Long.toString(n);
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("not a whole number of 0 or more: '" + v + "'");
    }

    private static final Pattern DRIVER = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?");
    private static final Pattern TOPOLOGY = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

    /** CSI's rule for a driver name: at most 63 characters, alphanumerics at both ends, '-' and '.' between. */
    static String driverName(String v) {
        return matching(v, DRIVER, 63, "a CSI driver name (e.g. local.loopcsi.io: letters, digits, '-' and '.', alphanumeric at both ends)");
    }

    /** The node ID is also the topology value: CSI's (and a label value's) rule. */
    static String topologyValue(String v) {
        return matching(v, TOPOLOGY, 63, "a topology value (letters, digits, '-', '_' and '.', alphanumeric at both ends)");
    }

    /** A Kubernetes object name that is also a label value (pool and node names end up in labels). */
    /** A volume or snapshot ID (vol-/snap- and 32 hex digits): what a pool directory's file names are made of. */
    static String orphanId(String v) {
        if (!io.loopcsi.engine.Ids.isVolumeId(v) && !io.loopcsi.engine.Ids.isSnapshotId(v)) {
            throw new IllegalArgumentException("not a volume or snapshot ID: '" + v + "' (vol-... or snap-..., as loopcsi doctor lists them)");
        }
        return v;
    }

    static String dnsName(String v, int max) {
        return matching(v, DNS_SUBDOMAIN, max, "a Kubernetes name (lower-case letters, digits, '-' and '.', alphanumeric at both ends)");
    }

    static String dnsLabel(String v) {
        return matching(v, DNS_LABEL, 63, "a namespace name (lower-case letters, digits and '-', alphanumeric at both ends)");
    }

    private static String matching(String v, Pattern p, int max, String what) {
        if (!p.matcher(v).matches()) {
            throw new IllegalArgumentException("not " + what + ": '" + v + "'");
        }
        if (v.length() > max) {
            throw new IllegalArgumentException("longer than " + max + " characters: '" + v + "'");
        }
        return v;
    }

    static String oneOf(String v, String... allowed) {
        if (!List.of(allowed).contains(v)) {
            throw new IllegalArgumentException("'" + v + "' is not one of " + String.join(", ", allowed));
        }
        return v;
    }

    /** HOST:PORT for Quarkus' HTTP server on TCP (health and metrics only: HttpSplit). */
    static Map<String, String> httpProperties(String hostPort) {
        Endpoint http;
        try {
            http = Endpoint.parse("tcp://" + hostPort);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not HOST:PORT: '" + hostPort + "' (e.g. 0.0.0.0:8080)");
        }
        Map<String, String> p = new LinkedHashMap<>();
        p.put("quarkus.http.host-enabled", "true");
        p.put("quarkus.http.domain-socket-enabled", "false");
        p.put("quarkus.http.host", http.host());
        p.put("quarkus.http.port", Integer.toString(http.port()));
        return p;
    }
}
