package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.GIB;
import static io.loopcsi.engine.Rig.MIB;
import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

class VolumeSizerTest {

    private static final long XFS_MIN = 300 * MIB;
    private static final String XFS_WHY = "xfs volumes need at least 300Mi";

    private static long size(long required, long limit) {
        return VolumeSizer.size(required, limit, MIB, "block volumes need at least 1Mi");
    }

    private static long xfs(long required, long limit) {
        return VolumeSizer.size(required, limit, XFS_MIN, XFS_WHY);
    }

    @Test
    void noRangeGivesTheDefaultOneGiB() {
        assertEquals(GIB, size(0, 0));
        assertEquals(GIB, xfs(0, 0));
    }

    @Test
    void onlyALimitGivesTheDefaultCappedToWholeMiBBelowTheLimit() {
        assertEquals(512 * MIB, size(0, 512 * MIB));
        assertEquals(512 * MIB, size(0, 512 * MIB + 12345));
        assertEquals(GIB, size(0, 10 * GIB));
    }

    @Test
    void requiredIsRoundedUpToWholeMiB() {
        assertEquals(MIB, size(1, 0));
        assertEquals(MIB, size(MIB, 0));
        assertEquals(2 * MIB, size(MIB + 1, 0));
        assertEquals(5 * GIB, size(5 * GIB, 0));
        assertEquals(2 * MIB, size(MIB + 1, 2 * MIB));
    }

    @Test
    void xfsMinimumIsAppliedWhenTheLimitAllowsIt() {
        assertEquals(XFS_MIN, xfs(100 * MIB, 0));
        assertEquals(XFS_MIN, xfs(1, GIB));
        assertEquals(XFS_MIN, xfs(100 * MIB, XFS_MIN));
        assertEquals(400 * MIB, xfs(400 * MIB, 0));
        // an odd minimum is rounded up to whole MiB
        assertEquals(2 * MIB, VolumeSizer.size(1, 0, MIB + 1, "odd"));
    }

    @Test
    void limitBelowTheMinimumIsOutOfRangeAndSaysWhy() {
        EngineException e = expect(Kind.OUT_OF_RANGE, () -> xfs(100 * MIB, 200 * MIB));
        assertTrue(e.getMessage().contains(XFS_WHY), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(XFS_MIN)), "names the limit to ask for: " + e.getMessage());
        expect(Kind.OUT_OF_RANGE, () -> xfs(0, 200 * MIB));
        expect(Kind.OUT_OF_RANGE, () -> size(0, 100)); // never a zero-byte volume
    }

    @Test
    void noWholeMiBBetweenRequiredAndLimitIsOutOfRange() {
        expect(Kind.OUT_OF_RANGE, () -> size(MIB + 1, MIB + 2));
    }

    @Test
    void requiredAboveLimitIsInvalid() {
        expect(Kind.INVALID_ARGUMENT, () -> size(2 * GIB, GIB));
    }

    @Test
    void negativeValuesAreInvalid() {
        expect(Kind.INVALID_ARGUMENT, () -> size(-1, 0));
        expect(Kind.INVALID_ARGUMENT, () -> size(0, -1));
        expect(Kind.INVALID_ARGUMENT, () -> size(Long.MIN_VALUE, 0));
    }

    @Test
    void hugeValuesNeverOverflow() {
        expect(Kind.OUT_OF_RANGE, () -> size(Long.MAX_VALUE, 0));
        expect(Kind.OUT_OF_RANGE, () -> size(Long.MAX_VALUE - 1, Long.MAX_VALUE));
        expect(Kind.OUT_OF_RANGE, () -> size(Long.MAX_VALUE - MIB + 2, 0));
        expect(Kind.OUT_OF_RANGE, () -> size(Sizes.MAX_VOLUME_BYTES + 1, 0));
        assertEquals(Sizes.MAX_VOLUME_BYTES, size(Sizes.MAX_VOLUME_BYTES, 0));
        assertEquals(Sizes.MAX_VOLUME_BYTES, size(Sizes.MAX_VOLUME_BYTES - 1, Long.MAX_VALUE));
        assertEquals(GIB, size(0, Long.MAX_VALUE));
    }

    /** Whatever it is asked, a size it returns lies in the range, is whole MiB and at least the minimum. */
    @Test
    void everyReturnedSizeSatisfiesTheRange() {
        Random r = new Random(42);
        for (int i = 0; i < 20_000; i++) {
            long required = r.nextInt(4) == 0 ? 0 : r.nextLong(2 * GIB);
            long limit = r.nextInt(3) == 0 ? 0 : r.nextLong(2 * GIB);
            long min = r.nextBoolean() ? MIB : XFS_MIN;
            long got;
            try {
                got = VolumeSizer.size(required, limit, min, "min");
            } catch (EngineException e) {
                assertTrue(e.kind() == Kind.OUT_OF_RANGE || e.kind() == Kind.INVALID_ARGUMENT, e.getMessage());
                boolean explained = (limit > 0 && required > limit) || (limit > 0 && limit < min)
                        || (limit > 0 && Sizes.roundUpToMiB(Math.max(required, min)) > limit);
                assertTrue(explained, "refused a satisfiable range: required=" + required + " limit=" + limit + " min=" + min);
                continue;
            }
            String ctx = "required=" + required + " limit=" + limit + " min=" + min + " -> " + got;
            assertEquals(0, got % MIB, ctx);
            assertTrue(got >= required, ctx);
            assertTrue(got >= min, ctx);
            assertTrue(limit == 0 || got <= limit, ctx);
        }
    }
}
