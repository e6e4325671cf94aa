package io.loopcsi.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Volume and snapshot IDs. An ID is derived from the CO's request name (a hash, so that a retried
 * CreateVolume with the same name lands on the same ID even after a crash) and uses a strict
 * alphabet: every ID received is checked here before any path is built from it, so no path can
 * be smuggled in through an ID.
 */
public final class Ids {

    private static final Pattern VOLUME = Pattern.compile("vol-[0-9a-f]{32}");
    private static final Pattern SNAPSHOT = Pattern.compile("snap-[0-9a-f]{32}");
    private static final Pattern GROUP = Pattern.compile("group-[0-9a-f]{32}");

    private Ids() {
    }

    public static String volumeIdFor(String name) {
        return "vol-" + digest("volume\0" + name);
    }

    public static String snapshotIdFor(String name) {
        return "snap-" + digest("snapshot\0" + name);
    }

    public static String groupSnapshotIdFor(String name) {
        return "group-" + digest("group\0" + name);
    }

    /** A group snapshot's member: named after the group and the member's volume, so a retried group lands on the same IDs. */
    public static String memberSnapshotIdFor(String groupName, String volumeId) {
        return snapshotIdFor(groupName + "\0" + volumeId);
    }

    public static boolean isGroupSnapshotId(String id) {
        return id != null && GROUP.matcher(id).matches();
    }

    public static String requireGroupSnapshotId(String id) {
        if (!isGroupSnapshotId(id)) {
            throw EngineException.notFound("group snapshot " + quote(id) + " does not exist: loopcsi group snapshot IDs look like "
                    + "group-<32 hex digits>");
        }
        return id;
    }

    public static boolean isVolumeId(String id) {
        return id != null && VOLUME.matcher(id).matches();
    }

    public static boolean isSnapshotId(String id) {
        return id != null && SNAPSHOT.matcher(id).matches();
    }

    /** Throws NOT_FOUND for anything that is not a volume ID this driver could have made. */
    public static String requireVolumeId(String id) {
        if (!isVolumeId(id)) {
            throw EngineException.notFound("volume " + quote(id) + " does not exist: loopcsi volume IDs look like vol-<32 hex digits>");
        }
        return id;
    }

    public static String requireSnapshotId(String id) {
        if (!isSnapshotId(id)) {
            throw EngineException.notFound("snapshot " + quote(id) + " does not exist: loopcsi snapshot IDs look like snap-<32 hex digits>");
        }
        return id;
    }

    /** Quotes a caller-supplied string for an error message, bounded and with control characters escaped. */
    public static String quote(String s) {
        if (s == null) {
            return "\"\"";
        }
        StringBuilder b = new StringBuilder("\"");
        int n = Math.min(s.length(), 80);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (s.length() > n) {
            b.append("...(").append(s.length()).append(" chars)");
        }
        return b.append('"').toString();
    }

    private static String digest(String s) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
