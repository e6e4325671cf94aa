package io.loopcsi.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The mounts of this process's mount namespace, read from /proc/self/mountinfo (never from
 * `mount` output, which is ambiguous for paths with spaces and differs between versions). It is
 * what every mount operation checks for idempotency.
 */
public final class MountTable {

    /** One line of mountinfo; paths are unescaped (\040 is a space). */
    public record Entry(int id, int parentId, String majorMinor, String root, String mountPoint, String options,
            String fsType, String source, String superOptions) {

        public boolean readOnly() {
            return List.of(options.split(",")).contains("ro");
        }
    }

    private final List<Entry> entries;

    private MountTable(List<Entry> entries) {
        this.entries = entries;
    }

    public static MountTable read() {
        try {
            return parse(Files.readAllLines(Path.of("/proc/self/mountinfo")));
        } catch (IOException e) {
            throw EngineException.internal("cannot read /proc/self/mountinfo: " + e.getMessage(), e);
        }
    }

    static MountTable parse(List<String> lines) {
        List<Entry> out = new ArrayList<>(lines.size());
        for (String line : lines) {
            String[] f = line.split(" ");
            int sep = indexOf(f, "-");
            if (f.length < 10 || sep < 6 || sep + 3 >= f.length) {
                continue;
            }
            out.add(new Entry(Integer.parseInt(f[0]), Integer.parseInt(f[1]), f[2], unescape(f[3]), unescape(f[4]), f[5],
                    f[sep + 1], unescape(f[sep + 2]), f[sep + 3]));
        }
        return new MountTable(List.copyOf(out));
    }

    public List<Entry> entries() {
        return entries;
    }

    /** The topmost mount at exactly this path, if the path is a mount point. */
    public Optional<Entry> at(Path mountPoint) {
        String p = mountPoint.toString();
        Entry found = null;
        for (Entry e : entries) {
            if (e.mountPoint().equals(p)) {
                found = e; // later lines are mounted on top of earlier ones
            }
        }
        return Optional.ofNullable(found);
    }

    /** Every mount of the filesystem on this device (major:minor), bind mounts included. */
    public List<Entry> ofDevice(String majorMinor) {
        return entries.stream().filter(e -> e.majorMinor().equals(majorMinor)).toList();
    }

    private static int indexOf(String[] f, String s) {
        for (int i = 6; i < f.length; i++) {
            if (f[i].equals(s)) {
                return i;
            }
        }
        return -1;
    }

    static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && isOctal(s, i + 1)) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean isOctal(String s, int from) {
        if (from + 3 > s.length()) {
            return false;
        }
        for (int i = from; i < from + 3; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '7') {
                return false;
            }
        }
        return true;
    }
}
