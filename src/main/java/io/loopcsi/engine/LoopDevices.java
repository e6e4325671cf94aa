package io.loopcsi.engine;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jboss.logging.Logger;

/**
 * Loop devices, found by their backing file. A backing file never has two read-write devices:
 * attach is always find-or-attach (two writable loop devices on one file corrupt a filesystem);
 * the only second device a file gets is a read-only companion for read-only publishes of a block
 * volume ({@link #attachReadOnlyCompanion}), which cannot write. Devices are never
 * detached implicitly (no autoclear), so they survive the driver's exit and restart.
 */
public class LoopDevices {

    private static final Logger LOG = Logger.getLogger(LoopDevices.class);
    private static final String DELETED = " (deleted)";

    private final CommandRunner runner;
    private final Path sysBlock;

    public LoopDevices(CommandRunner runner) {
        this(runner, Path.of("/sys/block"));
    }

    LoopDevices(CommandRunner runner, Path sysBlock) {
        this.runner = runner;
        this.sysBlock = sysBlock;
    }

    /**
     * The volume's device: the attached loop device (e.g. /dev/loop3) whose backing file is this
     * file, if any; its read-write one where the file also has read-only companions
     * ({@link #attachReadOnlyCompanion}). The kernel names a backing file by its path in the mount
     * the attaching process used: a device attached by an earlier driver process in another mount
     * namespace (the previous node plugin container, whose bind mount of the pool directory is
     * gone) reads as "/volumes/x.img". Such a device, whose path ends in the file's name, is matched
     * by device and inode (losetup --associated), so a restarted driver finds it instead of
     * attaching the file a second time.
     */
    public Optional<String> find(Path backingFile) {
        List<String> all = findAll(backingFile);
        return all.stream().filter(d -> !readOnly(d)).findFirst().or(() -> all.stream().findFirst());
    }

    /**
     * Every loop device attached to this file. The invariant is one read-write device per backing
     * file, ever (two writable devices on one file corrupt its filesystem); read-only devices
     * beside it are the companions that read-only publishes of a block volume get.
     */
    public List<String> findAll(Path backingFile) {
        String wanted = backingFile.toAbsolutePath().normalize().toString();
        String suffix = "/" + backingFile.getFileName();
        boolean elsewhere = false;
        List<String> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(sysBlock, "loop*")) {
            for (Path dev : ds) {
                String backing = readBacking(dev);
                if (wanted.equals(backing)) {
                    found.add("/dev/" + dev.getFileName());
                }
                elsewhere |= backing != null && backing.endsWith(suffix) && !wanted.equals(backing);
            }
        } catch (IOException e) {
            throw EngineException.internal("cannot scan " + sysBlock + ": " + e.getMessage(), e);
        }
        if (elsewhere) {
            byInode(wanted).stream().filter(d -> !found.contains(d)).forEach(found::add);
        }
        found.sort(null);
        return found;
    }

    /** The read-only companion of a file whose device is read-write, if one is attached. */
    public Optional<String> readOnlyCompanion(Path backingFile) {
        List<String> all = findAll(backingFile);
        if (all.stream().noneMatch(d -> !readOnly(d))) {
            return Optional.empty(); // no read-write device: a read-only one is the volume's own device
        }
        return all.stream().filter(this::readOnly).findFirst();
    }

    /**
     * Attaches a read-only device beside the file's read-write one: what a read-only publish of a
     * block volume staged read-write hands out (Kubernetes lets any pod use a claim read-only, and
     * the kernel does not apply a read-only bind mount to writes through a device node, so only a
     * device that refuses writes keeps such a pod from writing). It never writes, so it cannot
     * corrupt what the read-write device holds; it reads the same file with the same direct I/O
     * choice and the same sector size, so it sees what the writer has written to the file, counted
     * in the same sectors.
     *
     * @param sectorSize the volume's sector size ({@link SectorSizes}); 0: the kernel's choice
     */
    public String attachReadOnlyCompanion(Path backingFile, MutableParameters.DirectIo dio, int sectorSize) {
        String file = backingFile.toAbsolutePath().normalize().toString();
        List<String> cmd = new ArrayList<>(List.of("losetup", "--find", "--show", "--read-only"));
        addSectorSize(cmd, sectorSize);
        if (dio != MutableParameters.DirectIo.OFF) {
            List<String> withDio = new ArrayList<>(cmd);
            withDio.add("--direct-io=on");
            withDio.add(file);
            CommandRunner.Result r = runner.exec(withDio.toArray(String[]::new));
            if (r.ok()) {
                return r.stdout().strip();
            }
            Optional<String> attached = readOnlyCompanion(backingFile); // attached, only direct I/O refused
            if (attached.isPresent()) {
                return attached.get();
            }
        }
        cmd.add(file);
        return runner.run(cmd.toArray(String[]::new)).strip();
    }

    private static void addSectorSize(List<String> cmd, int sectorSize) {
        if (sectorSize > 0) {
            cmd.add("--sector-size");
            cmd.add(Integer.toString(sectorSize));
        }
    }

    private List<String> byInode(String file) {
        CommandRunner.Result r = runner.exec("losetup", "--list", "--noheadings", "--output", "NAME", "--associated", file);
        if (!r.ok()) {
            return List.of();
        }
        return r.stdout().lines().map(String::strip).filter(l -> l.startsWith("/dev/loop")).toList();
    }

    /** As {@link #findOrAttach(Path, boolean, MutableParameters.DirectIo, int)} with direct I/O where the host allows it, at the kernel's sector size. */
    public String findOrAttach(Path backingFile, boolean readOnly) {
        return findOrAttach(backingFile, readOnly, MutableParameters.DirectIo.AUTO, 0);
    }

    /**
     * Returns the loop device of the backing file, attaching it if it has none, with sectorSize-byte
     * sectors ({@link SectorSizes}: a volume's filesystem is made for its sector size; 0 leaves it to
     * the kernel). Direct I/O: AUTO asks for it (no double caching of the image in the host page
     * cache) and runs buffered where the host filesystem refuses it at that sector size; ON fails
     * there (FAILED_PRECONDITION, the device detached again); OFF attaches buffered. Whether direct I/O
     * is on is read from the device itself: the kernel may accept the request and quietly run
     * buffered (a 512-byte device on a file whose direct-I/O alignment is 4096). A read-only device
     * is the only way to make a published block volume read-only: the kernel does not apply a
     * read-only bind mount to writes through a device node. An existing device is returned as it is.
     */
    public String findOrAttach(Path backingFile, boolean readOnly, MutableParameters.DirectIo dio, int sectorSize) {
        Optional<String> existing = find(backingFile);
        if (existing.isPresent()) {
            return existing.get();
        }
        String file = backingFile.toAbsolutePath().normalize().toString();
        List<String> cmd = new ArrayList<>(List.of("losetup", "--find", "--show"));
        if (readOnly) {
            cmd.add("--read-only");
        }
        addSectorSize(cmd, sectorSize);
        if (dio == MutableParameters.DirectIo.OFF) {
            cmd.add(file);
            return runner.run(cmd.toArray(String[]::new)).strip();
        }
        cmd.add("--direct-io=on");
        cmd.add(file);
        CommandRunner.Result r = runner.exec(cmd.toArray(String[]::new));
        // losetup may have attached the device and only failed to switch on direct I/O, or
        // succeeded while the kernel kept the device buffered.
        existing = r.ok() ? Optional.of(r.stdout().strip()) : find(backingFile);
        if (existing.isPresent() && directIo(existing.get())) {
            return existing.get();
        }
        if (dio == MutableParameters.DirectIo.ON) {
            existing.ifPresent(this::detach);
            throw EngineException.precondition("directIO=on: the host filesystem under " + file + " refuses direct I/O on a loop device"
                    + (sectorSize > 0 ? " with " + sectorSize + "-byte sectors" : "") + " ("
                    + (r.ok() ? "the kernel runs it buffered: the file's direct-I/O alignment is larger than a sector" : r.stderr().strip())
                    + "); use directIO=auto or off");
        }
        if (existing.isPresent()) {
            LOG.infof("direct I/O not available for %s%s, using buffered I/O on %s", file,
                    sectorSize > 0 ? " at " + sectorSize + "-byte sectors" : "", existing.get());
            return existing.get();
        }
        cmd.remove("--direct-io=on");
        return runner.run(cmd.toArray(String[]::new)).strip();
    }

    /**
     * Whether a loop device on this file does direct I/O with sectorSize-byte sectors: a read-only
     * device attached for the question and detached again ({@link SectorSizes#probe}). The file must
     * be one no volume uses.
     */
    public boolean directIoWorks(Path file, int sectorSize) {
        CommandRunner.Result r = runner.exec("losetup", "--find", "--show", "--read-only", "--sector-size", Integer.toString(sectorSize),
                "--direct-io=on", file.toAbsolutePath().normalize().toString());
        List<String> devs = r.ok() ? List.of(r.stdout().strip()) : findAll(file);
        try {
            return r.ok() && directIo(devs.get(0));
        } finally {
            devs.forEach(this::detach);
        }
    }

    /**
     * Switches direct I/O of an attached device (losetup --direct-io=on|off, live). AUTO asks for
     * it and keeps buffered I/O where the host refuses; ON fails there with FAILED_PRECONDITION.
     */
    public void setDirectIo(String device, MutableParameters.DirectIo dio) {
        boolean want = dio != MutableParameters.DirectIo.OFF;
        if (directIo(device) == want) {
            return;
        }
        CommandRunner.Result r = runner.exec("losetup", "--direct-io=" + (want ? "on" : "off"), device);
        if (!r.ok() || directIo(device) != want) {
            if (dio == MutableParameters.DirectIo.AUTO) {
                LOG.infof("direct I/O not available on %s (%d-byte sectors), keeping buffered I/O", device, logicalBlockSize(device));
                return;
            }
            throw EngineException.precondition("directIO=" + dio.name().toLowerCase(java.util.Locale.ROOT) + ": cannot switch " + device
                    + " (" + logicalBlockSize(device) + "-byte sectors): " + (r.ok() ? "the kernel kept dio=" + (want ? 0 : 1)
                            : r.stderr().strip()) + (want ? "; the host filesystem refuses direct I/O at that sector size" : ""));
        }
    }

    /**
     * A volume's condition with what its read-write loop device does: base when that is abnormal;
     * abnormal when the volume asks for {@code directIO=on} and the device does buffered I/O (a
     * device attached before this was checked); healthy with a note when {@code auto} fell back to
     * buffered I/O (the host refuses direct I/O at the volume's sector size); else base.
     */
    public Condition conditionOf(String device, VolumeMeta v, Condition base) {
        MutableParameters.DirectIo wanted = v.mutable().directIo();
        if (base.abnormal() || wanted == MutableParameters.DirectIo.OFF || directIo(device)) {
            return base;
        }
        String what = "its loop device " + device + " does buffered I/O through the host page cache: the host filesystem refuses "
                + "direct I/O at its " + logicalBlockSize(device) + "-byte sectors";
        return wanted == MutableParameters.DirectIo.ON ? Condition.abnormal("directIO=on, but " + what)
                : Condition.healthy("directIO=auto, " + what);
    }

    /**
     * The loop devices attached to files under a directory, from one scan of /sys/block.
     *
     * @param count every such device (read-only companions too)
     * @param readWrite the read-write device of each file, by the file's path as the kernel names it
     */
    public record Attached(int count, java.util.Map<String, String> readWrite) {
    }

    public Attached attachedUnder(Path dir) {
        String prefix = dir.toAbsolutePath().normalize() + "/";
        java.util.Map<String, String> readWrite = new java.util.TreeMap<>();
        int count = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(sysBlock, "loop*")) {
            for (Path dev : ds) {
                String backing = readBacking(dev);
                String name = "/dev/" + dev.getFileName();
                if (backing != null && backing.startsWith(prefix)) {
                    count++;
                    if (!readOnly(name)) {
                        readWrite.put(backing, name);
                    }
                }
            }
        } catch (IOException e) {
            throw EngineException.internal("cannot scan " + sysBlock + ": " + e.getMessage(), e);
        }
        return new Attached(count, readWrite);
    }

    /**
     * How many of these volumes of the pool want direct I/O ({@code directIO} auto or on) and have a
     * read-write loop device that runs without it.
     */
    public long bufferedVolumes(PoolDirectory pool, List<VolumeMeta> volumes, Attached attached) {
        long n = 0;
        for (VolumeMeta v : volumes) {
            String dev = attached.readWrite().get(pool.volumeImage(v.id()).toAbsolutePath().normalize().toString());
            if (dev != null && v.mutable().directIo() != MutableParameters.DirectIo.OFF && !directIo(dev)) {
                n++;
            }
        }
        return n;
    }

    /** Whether the device refuses writes (attached with --read-only). */
    public boolean readOnly(String device) {
        try {
            return "1".equals(Files.readString(sysBlock.resolve(name(device)).resolve("ro")).strip());
        } catch (IOException e) {
            throw EngineException.internal("cannot read the read-only flag of " + device + ": " + e.getMessage(), e);
        }
    }

    /**
     * Detaches the device. The kernel detaches a device another opener still holds only when that
     * closes it (it sets autoclear instead): a blkid probe for a moment, or for as long as it lives a
     * mount of the volume copied into another mount namespace (a container started while the volume
     * was mounted, with private propagation). So this waits a little for the device to go, and
     * otherwise says who is to blame; until it goes, DeleteVolume refuses the volume
     * ({@link #pendingDetach}).
     */
    public void detach(String device) {
        Path dev = sysBlock.resolve(name(device));
        String file = readBacking(dev);
        runner.run("losetup", "--detach", device);
        // still this file's: the device number may be free already and taken by another attach meanwhile
        long until = System.nanoTime() + DETACH_WAIT_NANOS;
        while (file != null && file.equals(readBacking(dev)) && System.nanoTime() < until) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (file != null && file.equals(readBacking(dev))) {
            LOG.warnf("loop device %s is still open elsewhere (a process, or a mount of it in another mount namespace); the kernel "
                    + "detaches it when that closes it", device);
        }
    }

    /** How long {@link #detach} waits for a device another opener holds. */
    private static final long DETACH_WAIT_NANOS = 2_000_000_000L;

    /** Whether a detach was asked for this device and waits for another opener to close it (loop/autoclear). */
    public boolean pendingDetach(String device) {
        try {
            return "1".equals(Files.readString(sysBlock.resolve(name(device)).resolve("loop/autoclear")).strip());
        } catch (IOException e) {
            return false;
        }
    }

    /** Makes the kernel re-read the backing file's size (after the file grew). */
    public void refreshCapacity(String device) {
        runner.run("losetup", "--set-capacity", device);
    }

    /** Size of the device in bytes, as the kernel sees it now. */
    public long sizeBytes(String device) {
        Path size = sysBlock.resolve(name(device)).resolve("size");
        try {
            return Long.parseLong(Files.readString(size).strip()) * 512L;
        } catch (IOException | NumberFormatException e) {
            throw EngineException.internal("cannot read size of " + device + ": " + e.getMessage(), e);
        }
    }

    /** The device's logical block size (its sector size) in bytes, as the kernel uses it now. */
    public int logicalBlockSize(String device) {
        Path lbs = sysBlock.resolve(name(device)).resolve("queue/logical_block_size");
        try {
            return Integer.parseInt(Files.readString(lbs).strip());
        } catch (IOException | NumberFormatException e) {
            throw EngineException.internal("cannot read the sector size of " + device + ": " + e.getMessage(), e);
        }
    }

    /** Whether the kernel does direct I/O to the backing file of this device. */
    public boolean directIo(String device) {
        try {
            return "1".equals(Files.readString(sysBlock.resolve(name(device)).resolve("loop/dio")).strip());
        } catch (IOException e) {
            return false;
        }
    }

    private static String name(String device) {
        return Path.of(device).getFileName().toString();
    }

    private static String readBacking(Path dev) {
        try {
            String s = Files.readString(dev.resolve("loop/backing_file")).strip();
            // A device whose file was deleted (or replaced) is never the device of the current file.
            return s.endsWith(DELETED) ? null : s;
        } catch (NoSuchFileException e) {
            return null; // not attached
        } catch (IOException e) {
            return null;
        }
    }
}
