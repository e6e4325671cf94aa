package io.loopcsi.engine;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the volume engine needs from the host, checked before a driver serves: every external
 * command it runs (found on PATH, as CommandRunner starts them) and loop-device support. Each
 * missing command is named with the Debian/Ubuntu package that brings it, the list
 * src/main/sh/host-packages.sh installs. A plain class with no Quarkus, for the launcher and for
 * a later `loopcsi doctor`.
 */
public final class HostRequirements {

    /** Every command the engine runs, with its Debian/Ubuntu package. */
    public static final Map<String, String> COMMANDS = commands();

    private static Map<String, String> commands() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("losetup", "mount");
        m.put("mount", "mount");
        m.put("umount", "mount");
        m.put("blkid", "util-linux");
        m.put("blockdev", "util-linux");
        m.put("fsfreeze", "util-linux");
        m.put("fallocate", "util-linux");
        m.put("mkfs.xfs", "xfsprogs");
        m.put("xfs_growfs", "xfsprogs");
        m.put("xfs_io", "xfsprogs");
        m.put("mkfs.ext4", "e2fsprogs");
        m.put("resize2fs", "e2fsprogs");
        m.put("cp", "coreutils");
        m.put("stat", "coreutils");
        return java.util.Collections.unmodifiableMap(m);
    }

    /** One thing the host lacks, and how to get it. */
    public record Missing(String what, String remedy) {
        @Override
        public String toString() {
            return what + " (" + remedy + ")";
        }
    }

    private HostRequirements() {
    }

    /** What this process lacks: commands on its PATH, /dev/loop-control. */
    public static List<Missing> check() {
        return check(System.getenv().getOrDefault("PATH", ""), Path.of("/dev/loop-control"));
    }

    static List<Missing> check(String pathEnv, Path loopControl) {
        List<Missing> missing = new ArrayList<>();
        for (Map.Entry<String, String> c : COMMANDS.entrySet()) {
            if (!onPath(c.getKey(), pathEnv)) {
                missing.add(new Missing(c.getKey(), "package " + c.getValue()));
            }
        }
        if (!Files.exists(loopControl)) {
            missing.add(new Missing(loopControl.toString(), "loop devices: modprobe loop"));
        }
        return missing;
    }

    /** The packages that bring the missing commands, for one install command. */
    public static Set<String> packages(List<Missing> missing) {
        Set<String> p = new LinkedHashSet<>();
        for (Missing m : missing) {
            if (m.remedy().startsWith("package ")) {
                p.add(m.remedy().substring("package ".length()));
            }
        }
        return p;
    }

    /** One line saying what is missing and what to do; empty when nothing is. */
    public static String message(List<Missing> missing) {
        if (missing.isEmpty()) {
            return "";
        }
        Set<String> pkgs = packages(missing);
        return "missing on this host: " + String.join(", ", missing.stream().map(Missing::toString).toList())
                + (pkgs.isEmpty() ? "" : "; install with: apt-get install " + String.join(" ", pkgs) + " (or make run as root)");
    }

    private static boolean onPath(String command, String pathEnv) {
        return find(command, pathEnv).isPresent();
    }

    /** Where command is on pathEnv (as a process started with that PATH finds it), if anywhere. */
    public static java.util.Optional<Path> find(String command, String pathEnv) {
        for (String dir : pathEnv.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command)) && !Files.isDirectory(Path.of(dir, command))) {
                return java.util.Optional.of(Path.of(dir, command));
            }
        }
        return java.util.Optional.empty();
    }
}
