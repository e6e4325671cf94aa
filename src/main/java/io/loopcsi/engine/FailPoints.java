package io.loopcsi.engine;

import java.util.Set;

import org.jboss.logging.Logger;

/**
 * Crash points for the crash-consistency tests: when a named point is armed (configuration
 * {@code loopcsi.fail-points}, comma-separated), reaching it halts the process at once, as a
 * power cut would: no finally blocks, no shutdown hooks. Unarmed (always, in production) a
 * point costs one set lookup.
 */
public final class FailPoints {

    private static final Logger LOG = Logger.getLogger(FailPoints.class);

    /** Every point the engine has, in the order an operation reaches them. */
    public static final Set<String> KNOWN = Set.of(
            "create.image-written", "create.image-renamed",
            "delete.metadata-removed",
            "snapshot.image-written", "snapshot.image-renamed",
            "expand.image-grown");

    public static final FailPoints NONE = new FailPoints(Set.of());

    private final Set<String> armed;

    public FailPoints(Set<String> armed) {
        for (String p : armed) {
            if (!KNOWN.contains(p)) {
                throw new IllegalArgumentException("unknown fail point '" + p + "'; known: " + KNOWN);
            }
        }
        this.armed = Set.copyOf(armed);
    }

    public void reach(String point) {
        if (armed.contains(point)) {
            LOG.errorf("fail point %s reached: halting", point);
            Runtime.getRuntime().halt(86);
        }
    }
}
