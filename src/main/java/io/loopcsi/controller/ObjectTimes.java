package io.loopcsi.controller;

import java.time.Instant;

/** Times the nodes write into status (RFC 3339), as the epoch milliseconds CSI answers carry. */
final class ObjectTimes {

    private ObjectTimes() {
    }

    /** The first of the two that parses (the node's time, then e.g. the object's creationTimestamp); 0 when neither does. */
    static long millis(String rfc3339, String fallback) {
        for (String s : new String[] { rfc3339, fallback }) {
            if (s != null) {
                try {
                    return Instant.parse(s).toEpochMilli();
                } catch (RuntimeException ignored) {
                    // try the next
                }
            }
        }
        return 0;
    }
}
