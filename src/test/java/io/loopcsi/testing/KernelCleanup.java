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

    public static void releaseAndDelete(Path dir) {
        String root = dir.toAbsolutePath().normalize().toString();
        try {
            root = dir.toRealPath().toString();
        } catch (IOException ignored) {
            // already gone or never made
        }
        unmountUnder(root);
        detachUnder(root);
        deleteTree(dir);
    }

    public static void unmountUnder(String root) {
        for (int pass = 0; pass < 5; pass++) {
            List<String> mounts = new ArrayList<>();
            for (MountTable.Entry e : MountTable.read().entries()) {
                if (e.mountPoint().equals(root) || e.mountPoint().startsWith(root + "/")) {
                    mounts.add(e.mountPoint());
                }
            }
            if (mounts.isEmpty()) {
                return;
            }
            mounts.sort(Comparator.comparingInt(String::length).reversed());
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
