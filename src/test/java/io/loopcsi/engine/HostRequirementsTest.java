package io.loopcsi.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostRequirementsTest {

    @TempDir
    Path dir;

    @Test
    void theInstallScriptInstallsExactlyThePackagesOfTheCheckedCommands() throws Exception {
        Matcher m = Pattern.compile("(?m)^packages=\\(([^)]*)\\)").matcher(Files.readString(Path.of("src/main/sh/host-packages.sh")));
        assertTrue(m.find(), "packages=(...) in host-packages.sh");
        assertEquals(new TreeSet<>(HostRequirements.COMMANDS.values()), new TreeSet<>(Arrays.asList(m.group(1).trim().split("\\s+"))));
    }

    @Test
    void eachMissingCommandIsNamedWithItsPackage() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (String c : HostRequirements.COMMANDS.keySet()) {
            if (!c.equals("mkfs.xfs") && !c.equals("xfs_growfs")) {
                Files.createFile(bin.resolve(c), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x")));
            }
        }
        Path loopControl = Files.createFile(dir.resolve("loop-control"));
        List<HostRequirements.Missing> missing = HostRequirements.check(bin.toString(), loopControl);
        assertEquals(List.of("mkfs.xfs (package xfsprogs)", "xfs_growfs (package xfsprogs)"), missing.stream().map(Object::toString).toList());
        assertEquals(Set.of("xfsprogs"), HostRequirements.packages(missing));
        assertTrue(HostRequirements.message(missing).contains("apt-get install xfsprogs"), HostRequirements.message(missing));
        assertEquals(List.of(), HostRequirements.check(bin + ":/usr/sbin:/sbin", loopControl).stream()
                .filter(x -> !x.what().startsWith("mkfs.xfs") && !x.what().startsWith("xfs_growfs")).toList());
        assertEquals("/nonexistent/loop-control (loop devices: modprobe loop)",
                HostRequirements.check(bin.toString(), Path.of("/nonexistent/loop-control")).get(2).toString());
    }
}
