package io.loopcsi.bench;

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

/** Releases every mount and loop device under a benchmark's directory, then deletes it (also on failure). */
final class Cleanup {

    private Cleanup() {
    }

    static void releaseAndDelete(Path dir) {
        String root;
        try {
            root = dir.toRealPath().toString();
        } catch (IOException e) {
            return; // never made or already gone
        }
        for (int pass = 0; pass < 5; pass++) {
            List<String> mounts = new ArrayList<>();
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                    String mp = line.split(" ")[4].replace("\\040", " ");
                    if (mp.equals(root) || mp.startsWith(root + "/")) {
                        mounts.add(mp);
                    }
                }
            } catch (IOException e) {
                break;
            }
            if (mounts.isEmpty()) {
                break;
            }
            mounts.sort(Comparator.comparingInt(String::length).reversed());
            mounts.forEach(mp -> quiet("umount", "-l", mp));
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/sys/block"), "loop*")) {
            for (Path dev : ds) {
                Path bf = dev.resolve("loop/backing_file");
                if (Files.exists(bf) && Files.readString(bf).strip().replace(" (deleted)", "").startsWith(root + "/")) {
                    quiet("losetup", "-d", "/dev/" + dev.getFileName());
                }
            }
        } catch (IOException ignored) {
            // best effort
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
            System.err.println("bench: could not delete " + dir + ": " + e);
        }
    }

    static void quiet(String... cmd) {
        try {
            run(cmd);
        } catch (RuntimeException e) {
            System.err.println("bench cleanup: " + e.getMessage());
        }
    }

    static String run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor(120, TimeUnit.SECONDS);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
            }
            return out;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(String.join(" ", cmd) + ": " + e, e);
        }
    }
}
