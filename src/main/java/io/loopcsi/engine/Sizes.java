package io.loopcsi.engine;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes: Kubernetes-style quantities ("20Gi", "500M", "1.5Gi", "1073741824"; a fraction of a
 * byte rounds up, as Kubernetes does) and MiB rounding.
 */
public final class Sizes {

    public static final long MIB = 1L << 20;
    public static final long GIB = 1L << 30;
    /** Largest volume the engine accepts: far beyond any loop-backed use, far below overflow. */
    public static final long MAX_VOLUME_BYTES = 1L << 50;

    private static final Pattern QUANTITY = Pattern.compile("(\\d+)(\\.\\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E)?");

    private Sizes() {
    }

    public static long parse(String text) {
        Matcher m = QUANTITY.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a size: '" + text + "' (use e.g. 20Gi, 500Mi or bytes)");
        }
        long unit = switch (m.group(3) == null ? "" : m.group(3)) {
            case "" -> 1L;
            case "Ki" -> 1L << 10;
            case "Mi" -> 1L << 20;
            case "Gi" -> 1L << 30;
            case "Ti" -> 1L << 40;
            case "Pi" -> 1L << 50;
            case "Ei" -> 1L << 60;
            case "k", "K" -> 1_000L;
            case "M" -> 1_000_000L;
            case "G" -> 1_000_000_000L;
            case "T" -> 1_000_000_000_000L;
            case "P" -> 1_000_000_000_000_000L;
            default -> 1_000_000_000_000_000_000L;
        };
        java.math.BigDecimal bytes = new java.math.BigDecimal(m.group(1) + (m.group(2) == null ? "" : m.group(2)))
                .multiply(java.math.BigDecimal.valueOf(unit)).setScale(0, java.math.RoundingMode.CEILING);
        if (bytes.compareTo(java.math.BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw tooLarge(text);
        }
        return bytes.longValueExact();
    }

    private static IllegalArgumentException tooLarge(String text) {
        return new IllegalArgumentException("size '" + text.strip() + "' is too large (more than " + Long.MAX_VALUE + " bytes)");
    }

    /** Rounds up to a whole MiB; the caller has checked that bytes is within MAX_VOLUME_BYTES. */
    public static long roundUpToMiB(long bytes) {
        return ((bytes + MIB - 1) / MIB) * MIB;
    }

    public static String format(long bytes) {
        if (bytes >= GIB && bytes % GIB == 0) {
            return bytes / GIB + "Gi";
        }
        if (bytes >= MIB && bytes % MIB == 0) {
            return bytes / MIB + "Mi";
        }
        if (bytes >= MIB) {
            return String.format(Locale.ROOT, "%.1fMi", bytes / (double) MIB);
        }
        return bytes + "B";
    }
}
