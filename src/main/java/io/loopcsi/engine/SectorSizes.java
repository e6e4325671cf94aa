package io.loopcsi.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

import org.jboss.logging.Logger;

/**
 * The logical block size (sector size) of a volume's loop device: chosen once, when the volume is
 * made, kept in its metadata ({@link VolumeMeta#logicalBlockSize()}) and passed to
 * {@code losetup --sector-size} at every attach (issue 22). It must never change once the volume
 * holds data: xfs refuses to mount on a device whose sectors are larger than the sector size it was
 * made with ("device supports 4096 byte sectors (not 512)"), and a block volume's partition table
 * counts in sectors.
 *
 * <p>Why not leave it to the kernel: without {@code --sector-size}, current kernels (seen on 6.18)
 * give a loop device the backing file's direct-I/O alignment (STATX_DIOALIGN), older ones always
 * 512. That alignment is not a property of the pool but of the file at that moment: on xfs, a file
 * that shares blocks with another (a reflink snapshot or clone, which this driver makes) reports the
 * filesystem block size (4096) where it reported 512 before. An xfs volume made on a 512-byte device
 * then no longer mounted after its first snapshot. And with a fixed 512 on a host that needs 4096
 * (a disk with 4K logical sectors, or reflinked files on xfs) the kernel silently runs the device
 * with buffered I/O.
 *
 * <p>So a new volume gets the smallest size at which the pool's host filesystem does direct I/O on
 * a loop device, asked of the kernel itself once per pool ({@link #probe}): with a file that shares
 * its blocks where the host can reflink (any volume may be snapshotted later), 512 where that works,
 * else 4096, else (no direct I/O there at all, e.g. tmpfs) 512. Snapshots, restores and clones keep
 * their source's size (the filesystem in the image was made for it). A volume recorded before this
 * field existed gets the size its contents allow ({@link #forRecordedBefore}), written back once.
 */
public final class SectorSizes {

    private static final Logger LOG = Logger.getLogger(SectorSizes.class);
    public static final int SMALL = 512;
    public static final int LARGE = 4096;
    /** Probe files in a pool's root; leftovers of a process that died mid-probe are removed at the next probe. */
    static final String PROBE_PREFIX = ".sector-probe-";

    /** What a host directory does with direct I/O on a loop device, at each sector size. */
    public record Probe(boolean reflinks, boolean directIo512, boolean directIo4096) {

        /** The sector size for new volumes: the smallest with direct I/O, 512 where neither has it. */
        public int choice() {
            return directIo512 || !directIo4096 ? SMALL : LARGE;
        }

        /** One line for logs and doctor. */
        public String describe() {
            if (directIo512) {
                return "direct I/O at 512-byte sectors" + (reflinks ? " (also on files sharing blocks through reflinks)" : "");
            }
            if (directIo4096) {
                return "direct I/O needs 4096-byte sectors here ("
                        + (reflinks ? "files sharing blocks through reflinks, as snapshots and clones do, are aligned to 4096"
                                : "the host filesystem's direct-I/O alignment is 4096") + "): new volumes get 4096-byte sectors";
            }
            return "no direct I/O on a loop device here at any sector size: volumes do buffered I/O through the host page cache";
        }
    }

    private final PoolDirectory pool;
    private final CommandRunner runner;
    private final LoopDevices loops;
    private volatile Probe probed;

    public SectorSizes(PoolDirectory pool, CommandRunner runner, LoopDevices loops) {
        this.pool = pool;
        this.runner = runner;
        this.loops = loops;
    }

    /** The sector size for a volume made from nothing in this pool (probed at the first call, then kept). */
    public int forNewVolume() {
        return probe().choice();
    }

    /** This pool's probe, made once per process (the host filesystem under a pool does not change while it is served). */
    public Probe probe() {
        Probe p = probed;
        if (p == null) {
            synchronized (this) {
                p = probed;
                if (p == null) {
                    p = probe(pool.root(), runner, loops);
                    LOG.infof("pool %s: %s", pool.root(), p.describe());
                    probed = p;
                }
            }
        }
        return p;
    }

    /**
     * Asks the kernel: a small file in dir (made to share its blocks where the filesystem can reflink),
     * attached read-only with direct I/O at 512, then at 4096 bytes per sector; the loop device's own
     * {@code dio} flag is the answer (losetup succeeds where the kernel quietly falls back to buffered
     * I/O). Everything it makes is removed again. A probe that cannot attach at all says "no direct I/O".
     */
    public static Probe probe(Path dir, CommandRunner runner, LoopDevices loops) {
        removeLeftovers(dir);
        Path file = dir.resolve(PROBE_PREFIX + ProcessHandle.current().pid() + PoolDirectory.IMG);
        Path clone = dir.resolve(PROBE_PREFIX + ProcessHandle.current().pid() + "-clone" + PoolDirectory.IMG);
        try {
            PoolModes.createPrivateFile(file);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.allocate(64 << 10));
                ch.force(true);
            }
            boolean reflinks = runner.exec("cp", "--reflink=always", file.toString(), clone.toString()).ok();
            boolean at512 = loops.directIoWorks(file, SMALL);
            boolean at4096 = at512 || loops.directIoWorks(file, LARGE);
            return new Probe(reflinks, at512, at4096);
        } catch (IOException | RuntimeException e) {
            LOG.warnf("cannot probe direct I/O under %s (%s): volumes get 512-byte sectors", dir, e.getMessage());
            return new Probe(false, false, false);
        } finally {
            deleteQuietly(file);
            deleteQuietly(clone);
        }
    }

    /**
     * The sector size of a volume recorded before sizes were recorded (0 in its metadata): the size
     * of its loop device if it is attached (what its contents are in use with); else the pool's choice
     * where the filesystem in its image allows it, else 512: xfs mounts only on sectors up to the
     * sector size it was made with, ext4 up to its block size; a block volume whose contents are not
     * a filesystem known here gets 512, the size every kernel gave a loop device before sizes followed
     * the backing file.
     */
    public int forRecordedBefore(VolumeMeta v, Path image, Optional<String> attached) {
        if (attached.isPresent()) {
            return loops.logicalBlockSize(attached.get());
        }
        return forContents(v.mode(), image);
    }

    /**
     * The sector size an unattached image's contents allow (the rule of {@link #forRecordedBefore}
     * without a device): also a cross-node restore's when its source's size was not published.
     */
    public int forContents(VolumeMode mode, Path image) {
        int limit;
        try {
            limit = limitOf(readHead(image));
        } catch (IOException e) {
            throw EngineException.internal("cannot read the image " + image + ": " + e.getMessage(), e);
        }
        if (limit == 0) {
            return mode == VolumeMode.BLOCK ? SMALL : forNewVolume(); // a blank filesystem volume: mkfs follows the device
        }
        int choice = forNewVolume();
        return choice <= limit ? choice : SMALL;
    }

    /** The first 4 KiB of a file (fewer if it is shorter): where the xfs and ext4 superblocks are. */
    static byte[] readHead(Path image) throws IOException {
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            while (b.hasRemaining() && ch.read(b) > 0) {
                // until full or end of file
            }
            byte[] out = new byte[b.position()];
            b.flip().get(out);
            return out;
        }
    }

    /**
     * The largest sector size a device may have for the filesystem whose first bytes these are: xfs'
     * sb_sectsize (big-endian u16 at byte 102 after the magic "XFSB"), ext4's block size (1024 <<
     * s_log_block_size, little-endian u32 at 1024 + 24, magic 0xEF53 at 1024 + 56); 0 when neither is
     * there.
     */
    static int limitOf(byte[] head) {
        if (head.length >= 104 && head[0] == 'X' && head[1] == 'F' && head[2] == 'S' && head[3] == 'B') {
            return ByteBuffer.wrap(head, 102, 2).order(ByteOrder.BIG_ENDIAN).getShort() & 0xffff;
        }
        if (head.length >= 1024 + 58) {
            ByteBuffer le = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
            if ((le.getShort(1024 + 56) & 0xffff) == 0xEF53) {
                int log = le.getInt(1024 + 24);
                return log >= 0 && log <= 6 ? 1024 << log : 0;
            }
        }
        return 0;
    }

    /** A size a caller may record: 512 or 4096. */
    public static boolean valid(int size) {
        return size == SMALL || size == LARGE;
    }

    private static void removeLeftovers(Path dir) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, PROBE_PREFIX + "*")) {
            for (Path p : ds) {
                deleteQuietly(p);
            }
        } catch (IOException e) {
            // nothing to remove, or the probe itself will say what is wrong
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warnf("cannot remove %s: %s", p, e.getMessage());
        }
    }
}
