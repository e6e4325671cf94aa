package io.loopcsi.cli.csc;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parsers of flag values; each failure is a {@link UsageException} naming the flag and the value. */
final class Values {

    private static final Pattern SIZE = Pattern.compile("(\\d+)(Ki|Mi|Gi|Ti)?");
    private static final Pattern DURATION_PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");

    private Values() {
    }

    /**
     * csc's {@code key=val[,key=val...]}: a pair without '=' has an empty value, as in csc; an
     * empty key is an error. Later pairs win.
     */
    static void putKeyValues(Flag flag, String spec, Map<String, String> into) throws UsageException {
        for (String pair : spec.split(",", -1)) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            if (key.isEmpty()) {
                throw new UsageException(flag.canonical() + " \"" + spec + "\": empty key in \"" + pair + "\" (expected K=V[,K=V...])");
            }
            into.put(key, eq < 0 ? "" : pair.substring(eq + 1));
        }
    }

    static Map<String, String> keyValues(Flag flag, Iterable<String> specs) throws UsageException {
        Map<String, String> map = new LinkedHashMap<>();
        for (String spec : specs) {
            putKeyValues(flag, spec, map);
        }
        return map;
    }

    /** A byte count: a non-negative integer, optionally with a binary suffix (Ki, Mi, Gi, Ti). */
    static long bytes(Flag flag, String v) throws UsageException {
        Matcher m = SIZE.matcher(v);
        if (!m.matches()) {
            throw new UsageException(flag.canonical() + " \"" + v + "\": expected a number of bytes, e.g. 1073741824 or 1Gi");
        }
        int shift = m.group(2) == null ? 0 : switch (m.group(2)) {
            case "Ki" -> 10;
            case "Mi" -> 20;
            case "Gi" -> 30;
            default -> 40;
        };
        try {
            long n = Long.parseLong(m.group(1));
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new UsageException(flag.canonical() + " \"" + v + "\": too large for an int64");
        }
    }

    static int nonNegativeInt(Flag flag, String v) throws UsageException {
        try {
            int n = Integer.parseInt(v);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException(flag.canonical() + " \"" + v + "\": expected a non-negative 32-bit integer");
    }

    /** A Go duration as csc takes it ({@code 1m30s}, {@code 500ms}, {@code 2h}); it must be positive. */
    static Duration duration(Flag flag, String v) throws UsageException {
        Matcher m = DURATION_PART.matcher(v);
        double nanos = 0;
        int at = 0;
        while (at < v.length() && m.find(at) && m.start() == at) {
            double n = Double.parseDouble(m.group(1));
            nanos += n * switch (m.group(2)) {
                case "ns" -> 1L;
                case "us", "µs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                default -> 3_600_000_000_000L;
            };
            at = m.end();
        }
        if (v.isEmpty() || at != v.length()) {
            throw new UsageException(flag.canonical() + " \"" + v + "\": expected a duration such as 30s, 1m30s or 500ms");
        }
        if (nanos < 1 || nanos > Long.MAX_VALUE) {
            throw new UsageException(flag.canonical() + " \"" + v + "\": must be positive and at most 292 years");
        }
        return Duration.ofNanos((long) nanos);
    }
}
