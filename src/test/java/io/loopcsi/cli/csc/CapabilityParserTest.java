package io.loopcsi.cli.csc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import csi.v1.VolumeCapability;
import csi.v1.VolumeCapability.AccessMode.Mode;

class CapabilityParserTest {

    @Test
    void blockByNumbers() throws UsageException {
        VolumeCapability c = CapabilityParser.parse("1,block");
        assertEquals(Mode.SINGLE_NODE_WRITER, c.getAccessMode().getMode());
        assertTrue(c.hasBlock());
        assertEquals(c, CapabilityParser.parse("1,1"));
        assertEquals(c, CapabilityParser.parse("SINGLE_NODE_WRITER,BLOCK"));
    }

    @Test
    void mountWithFsTypeAndFlags() throws UsageException {
        VolumeCapability c = CapabilityParser.parse("SINGLE_NODE_WRITER,mount,xfs,uid=500,gid=500");
        assertEquals(Mode.SINGLE_NODE_WRITER, c.getAccessMode().getMode());
        assertEquals("xfs", c.getMount().getFsType());
        assertEquals(List.of("uid=500", "gid=500"), c.getMount().getMountFlagsList());
    }

    @Test
    void mountWithoutFlags() throws UsageException {
        VolumeCapability c = CapabilityParser.parse("MULTI_NODE_MULTI_WRITER,mount,xfs");
        assertEquals(Mode.MULTI_NODE_MULTI_WRITER, c.getAccessMode().getMode());
        assertEquals("xfs", c.getMount().getFsType());
        assertEquals(0, c.getMount().getMountFlagsCount());
        assertEquals(c, CapabilityParser.parse("5,2,xfs"));
    }

    @Test
    void mountWithoutFsTypeLeavesItToTheDriver() throws UsageException {
        assertEquals("", CapabilityParser.parse("single_node_reader_only,mount").getMount().getFsType());
        VolumeCapability c = CapabilityParser.parse("7,mount,,ro");
        assertEquals(Mode.SINGLE_NODE_MULTI_WRITER, c.getAccessMode().getMode());
        assertEquals("", c.getMount().getFsType());
        assertEquals(List.of("ro"), c.getMount().getMountFlagsList());
    }

    @Test
    void unknownModeIsSendableToExerciseDrivers() throws UsageException {
        assertEquals(Mode.UNKNOWN, CapabilityParser.parse("0,block").getAccessMode().getMode());
        assertEquals(Mode.UNKNOWN, CapabilityParser.parse("UNKNOWN,block").getAccessMode().getMode());
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            "''                      | expected MODE,TYPE",
            "1                       | expected MODE,TYPE",
            "SINGLE_NODE_WRITER      | expected MODE,TYPE",
            ",block                  | access mode is empty",
            "WRITER,block            | access mode \"WRITER\" is not one of UNKNOWN, SINGLE_NODE_WRITER",
            "8,block                 | access mode 8 is not a CSI access mode number (0-7)",
            "99999999999,block       | access mode 99999999999 is not a CSI access mode number",
            "-1,block                | access mode \"-1\" is not one of",
            "UNRECOGNIZED,block      | access mode \"UNRECOGNIZED\" is not one of",
            "1,file                  | access type \"file\" is not block, mount, 1 or 2",
            "1,3                     | access type \"3\" is not block, mount, 1 or 2",
            "1,                      | access type \"\" is not block, mount, 1 or 2",
            "1,block,xfs             | a block capability takes no FSTYPE or mount flags, found \"xfs\"",
            "1,mount,xfs,,ro         | mount flag 1 is empty",
            "1,mount,xfs,ro,         | mount flag 2 is empty",
    })
    void malformedCapabilitiesNameTheBadPart(String spec, String message) {
        UsageException e = assertThrows(UsageException.class, () -> CapabilityParser.parse(spec));
        assertTrue(e.getMessage().startsWith("--cap \"" + spec + "\": "), e.getMessage());
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }
}
