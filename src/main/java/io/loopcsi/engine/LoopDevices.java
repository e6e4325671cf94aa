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
     * choice, so it sees what the writer has written to the file.
     */
    public String attachReadOnlyCompanion(Path backingFile, MutableParameters.DirectIo dio) {
        String file = backingFile.toAbsolutePath().normalize().toString();
        if (dio != MutableParameters.DirectIo.OFF) {
            CommandRunner.Result r = runner.exec("losetup", "--find", "--show", "--read-only", "--direct-io=on", file);
            if (r.ok()) {
                return r.stdout().strip();
            }
            Optional<String> attached = readOnlyCompanion(backingFile); // attached, only direct I/O refused
            if (attached.isPresent()) {
                return attached.get();
            }
        }
        return runner.run("losetup", "--find", "--show", "--read-only", file).strip();
    }

    private List<String> byInode(String file) {
        CommandRunner.Result r = runner.exec("losetup", "--list", "--noheadings", "--output", "NAME", "--associated", file);
        if (!r.ok()) {
            return List.of();
        }
        return r.stdout().lines().map(String::strip).filter(l -> l.startsWith("/dev/loop")).toList();
    }

    /** How many attached loop devices have a backing file inside this directory. */
    public int countAttachedUnder(Path dir) {
        String prefix = dir.toAbsolutePath().normalize() + "/";
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(sysBlock, "loop*")) {
            for (Path dev : ds) {
                String backing = readBacking(dev);
                if (backing != null && backing.startsWith(prefix)) {
                    n++;
                }
            }
        } catch (IOException e) {
            throw EngineException.internal("cannot scan " + sysBlock + ": " + e.getMessage(), e);
        }
        return n;
    }

    /** As {@link #findOrAttach(Path, boolean, MutableParameters.DirectIo)} with direct I/O where the host allows it. */
    public String findOrAttach(Path backingFile, boolean readOnly) {
        return findOrAttach(backingFile, readOnly, MutableParameters.DirectIo.AUTO);
    }

    /**
     * Returns the loop device of the backing file, attaching it if it has none. Direct I/O: AUTO
     * asks for it (no double caching of the image in the host page cache) and falls back to
     * buffered I/O where the host filesystem refuses it; ON fails there (FAILED_PRECONDITION, the
     * device detached again); OFF attaches buffered. A read-only device is the only way to make a
     * published block volume read-only: the kernel does not apply a read-only bind mount to writes
     * through a device node. An existing device is returned as it is.
     */
    public String findOrAttach(Path backingFile, boolean readOnly, MutableParameters.DirectIo dio) {
        Optional<String> existing = find(backingFile);
        if (existing.isPresent()) {
            return existing.get();
        }
        String file = backingFile.toAbsolutePath().normalize().toString();
        List<String> cmd = new ArrayList<>(List.of("losetup", "--find", "--show"));
        if (readOnly) {
            cmd.add("--read-only");
        }
        if (dio == MutableParameters.DirectIo.OFF) {
            cmd.add(file);
            return runner.run(cmd.toArray(String[]::new)).strip();
        }
        cmd.add("--direct-io=on");
        cmd.add(file);
        CommandRunner.Result r = runner.exec(cmd.toArray(String[]::new));
        if (r.ok()) {
            return r.stdout().strip();
        }
        // losetup may have attached the device and only failed to switch on direct I/O.
        existing = find(backingFile);
        if (dio == MutableParameters.DirectIo.ON) {
            existing.ifPresent(this::detach);
            throw EngineException.precondition("directIO=on: the host filesystem under " + file + " refuses direct I/O on a loop device ("
                    + r.stderr().strip() + "); use directIO=auto or off");
        }
        if (existing.isPresent()) {
            LOG.infof("direct I/O not available for %s, using buffered I/O on %s", file, existing.get());
            return existing.get();
        }
        cmd.remove("--direct-io=on");
        return runner.run(cmd.toArray(String[]::new)).strip();
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
                LOG.infof("direct I/O not available on %s, keeping buffered I/O", device);
                return;
            }
            throw EngineException.precondition("directIO=" + dio.name().toLowerCase(java.util.Locale.ROOT) + ": cannot switch " + device
                    + ": " + (r.ok() ? "the kernel kept dio=" + (want ? 0 : 1) : r.stderr().strip()));
        }
    }

    /** Whether the device refuses writes (attached with --read-only). */
    public boolean readOnly(String device) {
        try {
            return "1".equals(Files.readString(sysBlock.resolve(name(device)).resolve("ro")).strip());
        } catch (IOException e) {
            throw EngineException.internal("cannot read the read-only flag of " + device + ": " + e.getMessage(), e);
        }
    }

    public void detach(String device) {
        runner.run("losetup", "--detach", device);
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
