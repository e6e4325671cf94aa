package io.loopcsi.engine;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

/**
 * Who may read a pool: its owner (root) only. Every file of a pool is created 0600 and every
 * directory 0700 from the first byte: the mode is given to the system call that creates it, and
 * a umask can only take bits away, so no umask widens it and no file ever exists with wider
 * modes, not even for a moment. {@link #tighten(Path)} brings a pool made by an earlier version
 * (0644 files in 0755 directories) to the same modes.
 */
public final class PoolModes {

    public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
    public static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
    public static final FileAttribute<Set<PosixFilePermission>> FILE_ATTR = PosixFilePermissions.asFileAttribute(FILE);
    public static final FileAttribute<Set<PosixFilePermission>> DIR_ATTR = PosixFilePermissions.asFileAttribute(DIR);
    /** S_ISVTX: a directory shared by several users, such as /tmp. */
    private static final int STICKY = 01000;

    private PoolModes() {
    }

    /**
     * Makes the pool directory (its parents with the usual modes, itself 0700) unless it exists,
     * and returns its real path. A directory shared by everyone (the root, or one with the sticky
     * bit such as /tmp) is refused: the pool directory is made private, so it must be the pool's own.
     */
    public static Path createPoolRoot(Path dir) {
        try {
            Path abs = dir.toAbsolutePath().normalize();
            if (abs.getParent() != null) {
                Files.createDirectories(abs.getParent());
            }
            try {
                Files.createDirectory(abs, DIR_ATTR);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(abs)) {
                    throw new IllegalStateException("pool directory " + abs + " exists and is not a directory");
                }
            }
            Path root = abs.toRealPath();
            if (root.getParent() == null || isSticky(root)) {
                throw new IllegalStateException("pool directory " + root + " is shared with other users (" + (root.getParent() == null
                        ? "the filesystem root" : "sticky bit") + "); the pool's directory is made private (0700), so give loopcsi a "
                        + "directory of its own, e.g. " + root.resolve("loopcsi-pool"));
            }
            return root;
        } catch (IOException e) {
            throw new IllegalStateException("cannot make pool directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /** A private directory (0700) at dir unless one exists; returns dir. */
    public static Path createPrivateDir(Path dir) throws IOException {
        try {
            Files.createDirectory(dir, DIR_ATTR);
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw e;
            }
        }
        return dir;
    }

    /**
     * A new, empty file at path, created 0600 (whatever was at path before, e.g. a leftover temp
     * file, is removed first, so the mode is always the one given here).
     */
    public static Path createPrivateFile(Path path) throws IOException {
        Files.deleteIfExists(path);
        return Files.createFile(path, FILE_ATTR);
    }

    /**
     * Sets the modes this version creates on a pool made by an earlier one: the directory itself,
     * its lock file, volumes/ and snapshots/ and every file in them (symbolic links are left as
     * they are, never followed). Returns how many files and directories it changed.
     */
    public static int tighten(Path root) throws IOException {
        int fixed = set(root, true) + set(root.resolve(PoolLock.FILE), false);
        for (String sub : List.of(PoolDirectory.VOLUMES, PoolDirectory.SNAPSHOTS)) {
            Path dir = root.resolve(sub);
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            fixed += set(dir, true);
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) {
                    fixed += set(p, false);
                }
            }
        }
        return fixed;
    }

    /** Gives a directory (or a regular file) at p whose mode differs the pool's mode; 1 if it changed it, else 0. */
    private static int set(Path p, boolean directory) throws IOException {
        Set<PosixFilePermission> want = directory ? DIR : FILE;
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException e) {
            return 0;
        }
        boolean kind = directory ? a.isDirectory() : a.isRegularFile();
        if (!kind || a.permissions().equals(want)) {
            return 0;
        }
        Files.setPosixFilePermissions(p, want);
        return 1;
    }

    private static boolean isSticky(Path dir) throws IOException {
        if (!dir.getFileSystem().supportedFileAttributeViews().contains("unix")) {
            return false;
        }
        return ((Integer) Files.getAttribute(dir, "unix:mode") & STICKY) != 0;
    }
}
