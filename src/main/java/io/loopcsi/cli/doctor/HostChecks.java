package io.loopcsi.cli.doctor;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.HostRequirements;

/**
 * What doctor checks about the machine itself: privileges, loop devices, every command the engine
 * runs (HostRequirements' list) and mkfs.xfs.
 */
final class HostChecks {

    /** CAP_SYS_ADMIN's bit in /proc/self/status' CapEff (linux/capability.h). */
    static final int CAP_SYS_ADMIN = 21;

    private final String pathEnv;
    private final CommandRunner runner;

    HostChecks(String pathEnv, CommandRunner runner) {
        this.pathEnv = pathEnv;
        this.runner = runner;
    }

    static HostChecks ofThisProcess() {
        return new HostChecks(System.getenv().getOrDefault("PATH", ""), new CommandRunner(Duration.ofSeconds(30)));
    }

    /** Root, or at least CAP_SYS_ADMIN (loop devices and mounts need it), from /proc/self/status. */
    static Finding privileges(String procStatus) {
        String uid = field(procStatus, "Uid:").split("\\s+")[0];
        String capEff = field(procStatus, "CapEff:");
        boolean sysAdmin;
        try {
            sysAdmin = !capEff.isEmpty() && new java.math.BigInteger(capEff, 16).testBit(CAP_SYS_ADMIN);
        } catch (NumberFormatException e) {
            sysAdmin = false;
        }
        String who = "uid " + (uid.isEmpty() ? "?" : uid);
        if (sysAdmin) {
            return Finding.ok("privileges", who + " with CAP_SYS_ADMIN");
        }
        return Finding.fail("privileges", who + " without CAP_SYS_ADMIN: loop devices and mounts are refused",
                "run as root (in a pod: securityContext.privileged: true)");
    }

    Finding privileges() {
        try {
            return privileges(Files.readString(Path.of("/proc/self/status")));
        } catch (IOException e) {
            return Finding.fail("privileges", "cannot read /proc/self/status: " + e.getMessage(), "run on Linux with /proc mounted");
        }
    }

    private static String field(String status, String name) {
        return status.lines().filter(l -> l.startsWith(name)).map(l -> l.substring(name.length()).strip()).findFirst().orElse("");
    }

    /** /dev/loop-control, and a free loop device (losetup --find), and how many are attached. */
    Finding loopDevices() {
        String check = "loop devices";
        if (!Files.exists(Path.of("/dev/loop-control"))) {
            return Finding.fail(check, "no /dev/loop-control: this kernel has no loop support loaded",
                    "modprobe loop (in a pod: privileged: true, so that the host's /dev is there)");
        }
        int attached = attachedLoopDevices();
        if (HostRequirements.find("losetup", pathEnv).isEmpty()) {
            return Finding.fail(check, "/dev/loop-control present, " + attached + " attached; losetup is missing to find a free one",
                    "apt-get install mount");
        }
        CommandRunner.Result r = runner.exec("losetup", "--find");
        String free = r.stdout().strip();
        if (!r.ok() || free.isEmpty()) {
            return Finding.fail(check, "no free loop device (" + attached + " attached): " + firstLine(r.stderr()),
                    "detach unused ones (losetup --list; losetup --detach DEV) or allow more: modprobe loop max_loop=256");
        }
        if (!Files.exists(Path.of(free))) {
            return Finding.fail(check, "the kernel offers " + free + " but there is no such device node (a /dev without the host's devices)",
                    "run privileged with the host's /dev (in a pod: privileged: true)");
        }
        return Finding.ok(check, "/dev/loop-control present; next free " + free + ", " + attached + " attached");
    }

    private static int attachedLoopDevices() {
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/sys/block"), "loop*")) {
            for (Path dev : ds) {
                if (Files.exists(dev.resolve("loop/backing_file"))) {
                    n++;
                }
            }
        } catch (IOException e) {
            // none visible
        }
        return n;
    }

    /** One finding per command the engine runs, with the package that brings it. */
    List<Finding> commands() {
        List<Finding> out = new ArrayList<>();
        for (Map.Entry<String, String> c : HostRequirements.COMMANDS.entrySet()) {
            Optional<Path> at = HostRequirements.find(c.getKey(), pathEnv);
            String check = "command " + c.getKey();
            out.add(at.isPresent() ? Finding.ok(check, at.get() + " (package " + c.getValue() + ")")
                    : Finding.fail(check, "not on PATH (" + pathEnv + ")", "apt-get install " + c.getValue()));
        }
        return out;
    }

    /**
     * mkfs.xfs' version, and whether it makes the smallest xfs volume loopcsi makes (300 MiB, the
     * minimum of xfsprogs 5.19 and later): a dry run (-N) on a sparse file of that size in probeDir.
     */
    Finding mkfsXfs(Path probeDir) {
        String check = "mkfs.xfs 300 MiB";
        if (HostRequirements.find("mkfs.xfs", pathEnv).isEmpty()) {
            return Finding.skip(check, "mkfs.xfs is missing (above)");
        }
        String version = firstLine(runner.exec("mkfs.xfs", "-V").stdout()).replace("mkfs.xfs version ", "");
        if (probeDir == null) {
            return Finding.skip(check, "mkfs.xfs " + version + "; not tried: no writable data dir (above)");
        }
        Path img = probeDir.resolve("xfs.img");
        try {
            try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(img.toFile(), "rw")) {
                f.setLength(300L << 20);
            }
            CommandRunner.Result r = runner.exec("mkfs.xfs", "-N", "-f", img.toString());
            if (r.ok()) {
                return Finding.ok(check, "mkfs.xfs " + version + " makes a 300 MiB filesystem (the smallest xfs volume; smaller requests are rounded up)");
            }
            return Finding.fail(check, "mkfs.xfs " + version + " refuses a 300 MiB filesystem: " + firstLine(r.stderr() + r.stdout()),
                    "install the distribution's xfsprogs (apt-get install xfsprogs)");
        } catch (IOException e) {
            return Finding.fail(check, "cannot make a test image in " + probeDir + ": " + e.getMessage(), "choose a writable --data-dir");
        } finally {
            try {
                Files.deleteIfExists(img);
            } catch (IOException ignored) {
                // the probe directory goes as a whole
            }
        }
    }

    static String firstLine(String s) {
        return s.strip().lines().findFirst().orElse("");
    }
}
