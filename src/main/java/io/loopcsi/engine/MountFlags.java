package io.loopcsi.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks the mount flags a CO passes (VolumeCapability.MountVolume.mount_flags) before they reach
 * mount(8): one option per entry, no commas or spaces to smuggle further options in, and none of
 * the options that would change what is mounted or how (loop, offset, bind, remount, helpers).
 */
public final class MountFlags {

    private static final Pattern OPTION = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.:+=-]{0,127}");
    private static final Set<String> FORBIDDEN = Set.of("loop", "offset", "sizelimit", "encryption", "bind", "rbind", "move",
            "remount", "make-shared", "make-private", "make-slave", "helper", "user", "users", "owner", "group", "defaults");
    /** Per-mount flags that a bind mount carries (the rest are filesystem options, applied at staging). */
    private static final Set<String> VFS = Set.of("ro", "nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime",
            "strictatime", "nosymfollow");

    private MountFlags() {
    }

    public static List<String> validate(List<String> flags) {
        int total = 0;
        for (String f : flags) {
            total += f.length();
            if (!OPTION.matcher(f).matches()) {
                throw EngineException.invalid("mount_flags: " + Ids.quote(f)
                        + " is not a single mount option (letters, digits and _.:+=- only; give one option per entry)");
            }
            String key = f.contains("=") ? f.substring(0, f.indexOf('=')) : f;
            if (FORBIDDEN.contains(key) || key.startsWith("x-") || key.startsWith("X-")) {
                throw EngineException.invalid("mount_flags: option " + Ids.quote(key) + " is not allowed: it changes what is mounted or how");
            }
        }
        if (total > 4096) {
            throw EngineException.invalid("mount_flags: " + total + " characters, the CSI spec allows at most 4 KiB");
        }
        return List.copyOf(flags);
    }

    /** The flags a bind mount of a published volume gets. */
    public static List<String> forBind(List<String> flags, boolean readOnly) {
        List<String> out = new ArrayList<>();
        if (readOnly) {
            out.add("ro");
        }
        for (String f : flags) {
            if (VFS.contains(f) && !out.contains(f)) {
                out.add(f);
            }
        }
        return out;
    }
}
