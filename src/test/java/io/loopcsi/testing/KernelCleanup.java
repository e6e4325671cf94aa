package io.loopcsi.testing;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.loopcsi.engine.MountTable;

/**
 * Leaves no kernel object behind: unmounts everything mounted under a test's directory (deepest
 * first), detaches every loop device whose backing file lies under it, then deletes it. Tests
 * call it in their teardown, so it runs even when they fail.
 */
public final class KernelCleanup {

    private KernelCleanup() {
    }

    /**
     * Mounts and loop devices nest in tests (a volume's device on a file in a host filesystem the
     * test made, mounted at a staging path under it): they are released from the top down, a plain
     * umount first, so that each backing file still reads as a path under root when its device is
     * detached. A lazy umount first would leave the kernel naming those files by their path inside
     * the detached filesystem ("/pool/volumes/..."), and their devices, and the host's, attached.
     */
    public static void releaseAndDelete(Path dir) {
        String root = dir.toAbsolutePath().normalize().toString();
        try {
            root = dir.toRealPath().toString();
        } catch (IOException ignored) {
            // already gone or never made
        }
        for (int pass = 0; pass < 6; pass++) {
            List<String> mounts = mountsUnder(root);
            List<String> devices = loopDevicesUnder(Path.of(root));
            if (mounts.isEmpty() && devices.isEmpty()) {
                break;
            }
            for (String mp : mounts) {
                run(pass < 4 ? new String[] { "umount", mp } : new String[] { "umount", "-l", mp }); // busy while a device holds a file in it
            }
            for (String dev : devices) {
                run("losetup", "-d", dev); // a device still mounted is released when its umount comes
            }
        }
        deleteTree(dir);
    }

    /** Mount points at or under root, deepest first. */
    private static List<String> mountsUnder(String root) {
        List<String> mounts = new ArrayList<>();
        for (MountTable.Entry e : MountTable.read().entries()) {
            if (e.mountPoint().equals(root) || e.mountPoint().startsWith(root + "/")) {
                mounts.add(e.mountPoint());
            }
        }
        mounts.sort(Comparator.comparingInt(String::length).reversed());
        return mounts;
    }

    public static void unmountUnder(String root) {
        for (int pass = 0; pass < 5; pass++) {
            List<String> mounts = mountsUnder(root);
            if (mounts.isEmpty()) {
                return;
            }
            for (String mp : mounts) {
                run("umount", "-l", mp);
            }
        }
    }

    public static void detachUnder(String root) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/sys/block"), "loop*")) {
            for (Path dev : ds) {
                Path bf = dev.resolve("loop/backing_file");
                if (!Files.exists(bf)) {
                    continue;
                }
                String backing = Files.readString(bf).strip().replace(" (deleted)", "");
                if (backing.startsWith(root + "/")) {
                    run("losetup", "-d", "/dev/" + dev.getFileName());
                }
            }
        } catch (IOException ignored) {
            // best effort
        }
    }

    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            System.err.println("could not delete " + dir + ": " + e);
        }
    }

    /** Loop devices whose backing file lies under root (for assertions). */
    public static List<String> loopDevicesUnder(Path root) {
        List<String> out = new ArrayList<>();
        String r = root.toAbsolutePath().normalize().toString();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/sys/block"), "loop*")) {
            for (Path dev : ds) {
                Path bf = dev.resolve("loop/backing_file");
                if (Files.exists(bf) && Files.readString(bf).strip().startsWith(r + "/")) {
                    out.add("/dev/" + dev.getFileName());
                }
            }
        } catch (IOException ignored) {
            // none
        }
        return out;
    }

    private static void run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(30, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException ignored) {
            // best effort
        }
    }
}
