package io.loopcsi.cli.doctor;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.LoopDevices;
import io.loopcsi.engine.SectorSizes;
import io.loopcsi.engine.Sizes;

/**
 * What doctor checks about the data directory's filesystem, by trying it in a probe directory
 * made there (or in its nearest existing parent, when the pool is not made yet) and removed
 * afterwards: that it is writable, what it is, sparse files, reflinks, free space.
 */
final class DataDirChecks implements AutoCloseable {

    /** Bytes the sparse-file probe writes at the end of a hole of this size. */
    private static final long HOLE = 64L << 20;

    private final Path dataDir;
    private final CommandRunner runner;
    private Path existing;
    private Path probe;
    private String whyNoProbe = "";

    DataDirChecks(Path dataDir, CommandRunner runner) {
        this.dataDir = dataDir.toAbsolutePath().normalize();
        this.runner = runner;
    }

    /** The probe directory, null when none could be made (filesystem() says why). */
    Path probeDir() {
        return probe;
    }

    /** The filesystem the pool is (or would be) on, and whether doctor can write there. */
    Finding filesystem() {
        String check = "data dir";
        existing = dataDir;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (Files.exists(dataDir) && !Files.isDirectory(dataDir)) {
            whyNoProbe = dataDir + " is not a directory";
            return Finding.fail(check, whyNoProbe, "choose a directory for --data-dir");
        }
        String where = existing.equals(dataDir) ? dataDir.toString() : dataDir + " (not made yet; checked in " + existing + ")";
        FileStore store;
        try {
            store = Files.getFileStore(existing);
            probe = Files.createTempDirectory(existing, ".loopcsi-doctor-");
        } catch (IOException | SecurityException e) {
            whyNoProbe = "cannot write in " + existing + ": " + e.getMessage();
            return Finding.fail(check, where + ": " + whyNoProbe, "choose a writable --data-dir (a host directory, e.g. /var/lib/loopcsi)");
        }
        String type = store.type();
        String detail = where + " on " + type + " (" + store.name() + ")";
        return switch (type) {
            case "tmpfs", "ramfs" -> Finding.warn(check, detail + ": in memory, every volume is lost at reboot",
                    "put --data-dir on a disk filesystem (xfs for instant snapshots)");
            case "overlay", "aufs" -> Finding.warn(check, detail + ": a container's own filesystem, volumes go with the container",
                    "mount a host directory there (hostPath)");
            case "nfs", "nfs4", "cifs", "smb3", "fuse", "fuseblk" -> Finding.warn(check, detail + ": a network or FUSE filesystem, slow and"
                    + " without the crash guarantees of a local one", "put --data-dir on a local filesystem");
            default -> Finding.ok(check, detail);
        };
    }

    /** Whether a file with a 64 MiB hole takes (almost) no space: volumes are sparse images. */
    Finding sparseFiles() {
        String check = "sparse files";
        if (probe == null) {
            return Finding.skip(check, "not tried: " + whyNoProbe);
        }
        Path f = probe.resolve("sparse");
        try {
            try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
                raf.seek(HOLE);
                raf.write(1);
                raf.getFD().sync();
            }
            CommandRunner.Result r = runner.exec("stat", "--format=%b %B", f.toString());
            if (!r.ok()) {
                return Finding.skip(check, "stat failed: " + HostChecks.firstLine(r.stderr()));
            }
            String[] blocks = r.stdout().strip().split(" ");
            long allocated = Long.parseLong(blocks[0]) * Long.parseLong(blocks[1]);
            if (allocated < Sizes.MIB) {
                return Finding.ok(check, "a 64 MiB file with a hole takes " + human(allocated) + " on disk");
            }
            return Finding.warn(check, "a 64 MiB file with a hole takes " + human(allocated)
                    + ": every volume takes its full size at once", "put --data-dir on a filesystem with sparse files (xfs, ext4, btrfs)");
        } catch (IOException | RuntimeException e) {
            return Finding.fail(check, "cannot write a test file in " + probe + ": " + e.getMessage(), "choose a writable --data-dir");
        }
    }

    /** Whether cp --reflink=always works there: snapshots and clones are then instant and share blocks. */
    Finding reflinks() {
        String check = "reflinks";
        if (probe == null) {
            return Finding.skip(check, "not tried: " + whyNoProbe);
        }
        try {
            Path a = Files.write(probe.resolve("a"), new byte[64 << 10]);
            CommandRunner.Result r = runner.exec("cp", "--reflink=always", a.toString(), probe.resolve("b").toString());
            if (r.ok()) {
                return Finding.ok(check, "snapshots and clones share blocks with their source (instant)");
            }
            String why = HostChecks.firstLine(r.stderr());
            why = why.substring(why.lastIndexOf(": ") + 1).strip(); // cp names the probe files first
            return Finding.warn(check, "no reflinks here (" + why + "): snapshots and clones are full copies,"
                    + " slow and as big as their source", "for instant snapshots put --data-dir on xfs made with reflink=1 (mkfs.xfs' default) or btrfs");
        } catch (IOException | RuntimeException e) {
            return Finding.fail(check, "cannot write a test file in " + probe + ": " + e.getMessage(), "choose a writable --data-dir");
        }
    }

    /**
     * Whether a loop device on a file there does direct I/O, and at which sector size: the pool's own
     * probe ({@link SectorSizes#probe}), which decides the sector size of the pool's new volumes.
     */
    Finding directIo() {
        String check = "direct I/O";
        if (probe == null) {
            return Finding.skip(check, "not tried: " + whyNoProbe);
        }
        if (!Files.exists(Path.of("/dev/loop-control"))) {
            return Finding.skip(check, "not tried: no loop devices");
        }
        SectorSizes.Probe p = SectorSizes.probe(probe, runner, new LoopDevices(runner));
        if (p.directIo512() || p.directIo4096()) {
            return Finding.ok(check, p.describe());
        }
        return Finding.warn(check, p.describe() + " (the pool's data is cached twice, in the volume's and the host's page cache)",
                "put --data-dir on a disk filesystem (ext4, xfs)");
    }

    /**
     * Free space against the capacity the pool is to offer: the engine never offers more than the
     * filesystem has free, so less free space than capacity is a smaller pool (warn), and less than
     * one smallest xfs volume (300 MiB) no pool at all (fail).
     */
    Finding freeSpace(long capacity) {
        String check = "free space";
        if (existing == null) {
            return Finding.skip(check, "not tried: " + whyNoProbe);
        }
        long free;
        try {
            free = Files.getFileStore(existing).getUsableSpace();
        } catch (IOException e) {
            return Finding.fail(check, "cannot read the free space of " + existing + ": " + e.getMessage(), "choose another --data-dir");
        }
        return freeSpace(free, capacity);
    }

    static Finding freeSpace(long free, long capacity) {
        String check = "free space";
        String detail = human(free) + " free for a capacity of " + human(capacity);
        if (free < 300 * Sizes.MIB) {
            return Finding.fail(check, detail + ": not even one xfs volume (300 MiB) fits", "free space there or choose another --data-dir");
        }
        if (free < capacity) {
            return Finding.warn(check, detail + ": the pool offers only what is free", "free space, or lower --capacity to " + human(free));
        }
        return Finding.ok(check, detail);
    }

    static String human(long bytes) {
        if (bytes >= Sizes.GIB) {
            return String.format(java.util.Locale.ROOT, "%.1f GiB", bytes / (double) Sizes.GIB);
        }
        if (bytes >= Sizes.MIB) {
            return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) Sizes.MIB);
        }
        return String.format(java.util.Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }

    /** Removes the probe directory. */
    @Override
    public void close() {
        if (probe == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(probe)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a hidden directory of a few bytes
        }
    }
}
