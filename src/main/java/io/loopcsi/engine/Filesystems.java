package io.loopcsi.engine;

import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/** Making, probing, growing and measuring the filesystems loopcsi supports. */
public class Filesystems {

    public static final Set<String> SUPPORTED = Set.of("xfs", "ext4");
    public static final String DEFAULT = "xfs";

    /** Usage of a mounted filesystem, from statfs(2). */
    public record Usage(long totalBytes, long availableBytes, long usedBytes, long totalInodes, long freeInodes) {
    }

    private final CommandRunner runner;

    public Filesystems(CommandRunner runner) {
        this.runner = runner;
    }

    /**
     * Smallest filesystem mkfs accepts: current xfsprogs (6.x) refuse xfs below 300 MiB; ext4
     * below a few MiB has no room for its journal.
     */
    public static long minimumBytes(String fsType) {
        return switch (fsType) {
            case "xfs" -> 300 * Sizes.MIB;
            case "ext4" -> 16 * Sizes.MIB;
            default -> Sizes.MIB;
        };
    }

    /**
     * What the device holds: a filesystem type, "partition table", or empty when blank. Only a
     * blank device is ever formatted.
     */
    public Optional<String> probe(String device) {
        CommandRunner.Result r = runner.exec("blkid", "--probe", "--output", "export", device);
        if (r.exitCode() == 2) {
            return Optional.empty(); // nothing found: blank
        }
        if (!r.ok()) {
            throw CommandRunner.failure(r, "blkid");
        }
        String type = null;
        String pt = null;
        for (String line : r.stdout().split("\n")) {
            if (line.startsWith("TYPE=")) {
                type = line.substring(5);
            } else if (line.startsWith("PTTYPE=")) {
                pt = line.substring(7);
            }
        }
        if (type != null) {
            return Optional.of(type);
        }
        return Optional.of(pt != null ? "partition table (" + pt + ")" : "unknown signature");
    }

    /**
     * Makes the filesystem, never discarding the device (mkfs discards by default): a loop device
     * turns a discard into a hole punched in its image, which would undo a thick volume's
     * allocation at its first stage, and a fresh image has nothing to discard anyway (the discard
     * of a large thick image is slow work for nothing).
     */
    public void make(String device, String fsType) {
        switch (fsType) {
            // No -f: mkfs.xfs refuses to overwrite a signature it finds, a second guard after probe(). -K: no discard.
            case "xfs" -> runner.run("mkfs.xfs", "-q", "-K", device);
            // -m 0: no blocks reserved for root, the volume belongs to its workload. lazy_*_init=0: the inode tables
            // and journal are zeroed now, not by ext4lazyinit after the first mount, whose zeroing a loop device
            // turns into holes in the image after the stage has allocated a thick volume whole (CI saw 512 KiB go).
            case "ext4" -> runner.run("mkfs.ext4", "-q", "-m", "0", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0", device);
            default -> throw EngineException.invalid("unsupported filesystem type " + Ids.quote(fsType));
        }
    }

    /** Grows the filesystem mounted at mountPoint (on device) to the device's size. */
    public void grow(String device, Path mountPoint, String fsType) {
        switch (fsType) {
            case "xfs" -> runner.run("xfs_growfs", mountPoint.toString());
            case "ext4" -> runner.run("resize2fs", device);
            default -> throw EngineException.invalid("unsupported filesystem type " + Ids.quote(fsType));
        }
    }

    public Usage usage(Path path) {
        String out = runner.run("stat", "--file-system", "--format", "%S %b %f %a %c %d", path.toString()).strip();
        String[] f = out.split("\\s+");
        long bsize = Long.parseLong(f[0]);
        long blocks = Long.parseLong(f[1]);
        long free = Long.parseLong(f[2]);
        long avail = Long.parseLong(f[3]);
        return new Usage(blocks * bsize, avail * bsize, (blocks - free) * bsize, Long.parseLong(f[4]), Long.parseLong(f[5]));
    }
}
