package io.loopcsi.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

class MountTableTest {

    private static final List<String> LINES = List.of(
            "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard",
            // optional fields (shared:, master:) before the separator
            "36 22 7:3 / /var/lib/kubelet/plugins/staging\\040dir rw,noatime shared:12 master:3 - xfs /dev/loop3 rw,nouuid",
            // no optional fields at all
            "40 22 7:3 / /pods/a/mount ro,relatime - xfs /dev/loop3 rw,nouuid",
            // bind mount of a device node: root names the node inside devtmpfs
            "41 22 0:5 /loop4 /pods/b/dev rw,nosuid - devtmpfs udev rw,size=4k",
            // two mounts stacked on one path: the later line is on top
            "50 22 7:5 / /stacked rw - ext4 /dev/loop5 rw",
            "51 50 7:6 / /stacked ro - xfs /dev/loop6 ro",
            // a tab and a backslash escaped in a path, and a source with a space
            "60 22 0:44 / /weird\\011name\\134x rw - tmpfs my\\040tmpfs rw",
            // garbage that must be skipped, not crash the parser
            "not a mountinfo line",
            "70 22 7:9 / /no-separator rw shared:1 xfs /dev/loop9 rw");

    private final MountTable table = MountTable.parse(LINES);

    @Test
    void unescapesOctalEscapesInPaths() {
        MountTable.Entry e = table.at(Path.of("/var/lib/kubelet/plugins/staging dir")).orElseThrow();
        assertEquals("7:3", e.majorMinor());
        assertEquals("xfs", e.fsType());
        assertEquals("/dev/loop3", e.source());
        assertEquals("rw,nouuid", e.superOptions());
        assertTrue(table.at(Path.of("/weird\tname\\x")).isPresent());
        assertEquals("my tmpfs", table.at(Path.of("/weird\tname\\x")).orElseThrow().source());
        assertFalse(table.at(Path.of("/var/lib/kubelet/plugins/staging\\040dir")).isPresent());
    }

    @Test
    void fieldsAfterTheSeparatorAreFoundWithAndWithoutOptionalFields() {
        MountTable.Entry withOpt = table.at(Path.of("/var/lib/kubelet/plugins/staging dir")).orElseThrow();
        assertEquals(36, withOpt.id());
        assertEquals(22, withOpt.parentId());
        assertEquals("rw,noatime", withOpt.options());
        assertFalse(withOpt.readOnly());
        MountTable.Entry without = table.at(Path.of("/pods/a/mount")).orElseThrow();
        assertEquals("xfs", without.fsType());
        assertEquals("/dev/loop3", without.source());
        assertTrue(without.readOnly());
    }

    @Test
    void picksTheTopmostMountOfAPath() {
        MountTable.Entry top = table.at(Path.of("/stacked")).orElseThrow();
        assertEquals(51, top.id());
        assertEquals("7:6", top.majorMinor());
        assertTrue(top.readOnly());
    }

    @Test
    void findsEveryMountOfADeviceAndOnlyExactPaths() {
        assertEquals(List.of(36, 40), table.ofDevice("7:3").stream().map(MountTable.Entry::id).toList());
        assertEquals("/loop4", table.at(Path.of("/pods/b/dev")).orElseThrow().root());
        assertFalse(table.at(Path.of("/pods/a")).isPresent());
        assertFalse(table.at(Path.of("/pods/a/mount/sub")).isPresent());
        assertFalse(table.at(Path.of("/no-separator")).isPresent(), "a line without ' - ' is skipped");
        assertEquals(7, table.entries().size());
    }

    @Test
    void readsThisProcessesRealMountTable() {
        MountTable real = MountTable.read();
        assertTrue(real.at(Path.of("/")).isPresent());
        assertTrue(real.at(Path.of("/proc")).isPresent());
        assertEquals("proc", real.at(Path.of("/proc")).orElseThrow().fsType());
    }
}
