package io.loopcsi.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** mount(8)/umount(8) through the command runner; callers check MountTable for idempotency. */
public class Mounter {

    private final CommandRunner runner;

    public Mounter(CommandRunner runner) {
        this.runner = runner;
    }

    public void mount(String device, Path target, String fsType, List<String> options) {
        List<String> cmd = new ArrayList<>(List.of("mount", "-t", fsType));
        if (!options.isEmpty()) {
            cmd.add("-o");
            cmd.add(String.join(",", options));
        }
        cmd.add(device);
        cmd.add(target.toString());
        runner.run(cmd.toArray(String[]::new));
    }

    /**
     * Bind-mounts source onto target, then applies the per-mount flags (ro, nosuid, ...) with a
     * remount: a bind mount ignores flags given with it on older kernels.
     */
    public void bind(Path source, Path target, List<String> vfsFlags) {
        runner.run("mount", "--bind", source.toString(), target.toString());
        if (!vfsFlags.isEmpty()) {
            try {
                runner.run("mount", "-o", "remount,bind," + String.join(",", vfsFlags), target.toString());
            } catch (EngineException e) {
                unmount(target); // never leave a writable mount behind where read-only was asked
                throw e;
            }
        }
    }

    public void unmount(Path target) {
        runner.run("umount", target.toString());
    }

    /** "major:minor" of a device node, as mountinfo and sysfs spell it. */
    public static String majorMinor(Path deviceNode) {
        try {
            long rdev = ((Number) Files.getAttribute(deviceNode, "unix:rdev")).longValue();
            long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
            long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
            return major + ":" + minor;
        } catch (IOException | UnsupportedOperationException e) {
            throw EngineException.internal("cannot stat " + deviceNode + ": " + e.getMessage(), e);
        }
    }

    /** The device number a path refers to when it is a device node (or a bind mount of one), else 0. */
    public static long rdev(Path path) {
        try {
            return ((Number) Files.getAttribute(path, "unix:rdev")).longValue();
        } catch (IOException | UnsupportedOperationException e) {
            return 0;
        }
    }
}
