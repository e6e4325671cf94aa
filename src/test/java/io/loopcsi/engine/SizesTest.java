package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.GIB;
import static io.loopcsi.engine.Rig.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SizesTest {

    @Test
    void parsesBinaryDecimalAndPlainQuantities() {
        assertEquals(20 * GIB, Sizes.parse("20Gi"));
        assertEquals(500 * MIB, Sizes.parse("500Mi"));
        assertEquals(4096, Sizes.parse("4Ki"));
        assertEquals(3L << 40, Sizes.parse("3Ti"));
        assertEquals(1L << 50, Sizes.parse("1Pi"));
        assertEquals(500_000_000L, Sizes.parse("500M"));
        assertEquals(2_000L, Sizes.parse("2k"));
        assertEquals(2_000L, Sizes.parse("2K"));
        assertEquals(7_000_000_000_000L, Sizes.parse("7T"));
        assertEquals(1_073_741_824L, Sizes.parse("1073741824"));
        assertEquals(GIB, Sizes.parse(" 1Gi\n"));
        // what the StoragePool schema accepts for capacityPerNode (StoragePoolSpec.QUANTITY), so a
        // node pod never refuses a capacity the API server let through
        assertEquals(GIB + GIB / 2, Sizes.parse("1.5Gi"));
        assertEquals(1L << 60, Sizes.parse("1Ei"));
        assertEquals(2L, Sizes.parse("1.5"), "a fraction of a byte rounds up");
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("8Ei"));
    }

    @Test
    void rejectsWhatIsNotAQuantity() {
        for (String bad : new String[] {"", "Gi", "1.", ".5Gi", "-1", "-1Gi", "10GB", "10 Gi", "1gi", "0x10", "1e3"}) {
            assertThrows(IllegalArgumentException.class, () -> Sizes.parse(bad), bad);
        }
    }

    @Test
    void rejectsQuantitiesThatDoNotFitInALongWithAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse("99999999Pi"));
        assertEquals(true, e.getMessage().contains("99999999Pi"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("99999999999999999999"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("9223372036854775807K"));
    }

    @Test
    void formatsReadably() {
        assertEquals("1Gi", Sizes.format(GIB));
        assertEquals("20Gi", Sizes.format(20 * GIB));
        assertEquals("300Mi", Sizes.format(300 * MIB));
        assertEquals("1025Mi", Sizes.format(GIB + MIB));
        assertEquals("1.5Mi", Sizes.format(MIB + MIB / 2));
        assertEquals("512B", Sizes.format(512));
        assertEquals("0B", Sizes.format(0));
    }

    @Test
    void formatRoundTripsThroughParse() {
        for (long b : new long[] {GIB, 7 * GIB, 300 * MIB, MIB, 4097 * MIB}) {
            assertEquals(b, Sizes.parse(Sizes.format(b)));
        }
    }

    @Test
    void roundsUpToWholeMiB() {
        assertEquals(0, Sizes.roundUpToMiB(0));
        assertEquals(MIB, Sizes.roundUpToMiB(1));
        assertEquals(MIB, Sizes.roundUpToMiB(MIB));
        assertEquals(2 * MIB, Sizes.roundUpToMiB(MIB + 1));
        assertEquals(Sizes.MAX_VOLUME_BYTES, Sizes.roundUpToMiB(Sizes.MAX_VOLUME_BYTES - 1));
    }
}
