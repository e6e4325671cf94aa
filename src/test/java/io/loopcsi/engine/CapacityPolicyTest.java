package io.loopcsi.engine;

import static io.loopcsi.engine.Sizes.GIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The capacity rule (issue 24, part 4), with docs/architecture.md's worked example. */
class CapacityPolicyTest {

    @Test
    void theWorkedExampleOfTheArchitectureDoc() {
        CapacityPolicy p = new CapacityPolicy(100 * GIB, 50 * GIB, 2);
        // a thick 20Gi volume, thin volumes of 60Gi with 10Gi written; 300Gi free of a 500Gi host filesystem
        PoolCapacity c = p.evaluate(new CapacityPolicy.Usage(60 * GIB, 20 * GIB, 0, 0, 0, 300 * GIB, 50 * GIB, 500 * GIB));
        assertEquals(80 * GIB, c.allocatedBytes());
        assertEquals(50 * GIB, c.chargedBytes(), "thick in full, thin at half");
        assertEquals(100 * GIB, c.availableBytes(), "(100 - 50) x 2, under the host's 300 - 50 - 50");
        assertEquals(50 * GIB, c.availableThickBytes());
        assertEquals("", c.problem());

        PoolCapacity tightHost = p.evaluate(new CapacityPolicy.Usage(60 * GIB, 20 * GIB, 0, 0, 0, 120 * GIB, 50 * GIB, 500 * GIB));
        assertEquals(20 * GIB, tightHost.availableBytes(), "the host, not the cap, decides: 120 - 50 - 50");
        assertEquals(20 * GIB, tightHost.availableThickBytes());
    }

    @Test
    void withoutReserveAndOvercommitTheRuleIsTheOldOne() {
        CapacityPolicy p = CapacityPolicy.cap(10 * GIB);
        PoolCapacity c = p.evaluate(new CapacityPolicy.Usage(3 * GIB, 2 * GIB, GIB, 0, 0, 100 * GIB, 4 * GIB, 200 * GIB));
        assertEquals(4 * GIB, c.availableBytes(), "min(10 - 6, 100 - 4)");
        assertEquals(c.availableBytes(), c.availableThickBytes());
        assertEquals(c.allocatedBytes(), c.chargedBytes());
    }

    @Test
    void inFlightAdmissionsCountWithTheirChargeAndTheirFullSize() {
        CapacityPolicy p = new CapacityPolicy(10 * GIB, 0, 4);
        // an 8Gi thin create in flight is charged 2Gi and promised its full 8Gi on the host
        PoolCapacity c = p.evaluate(new CapacityPolicy.Usage(0, 0, 0, 8 * GIB, 2 * GIB, 20 * GIB, 8 * GIB, 50 * GIB));
        assertEquals(2 * GIB, c.chargedBytes());
        assertEquals(12 * GIB, c.availableBytes(), "(10 - 2) x 4 = 32, but the host has 20 - 8");
        assertEquals(8 * GIB, c.availableThickBytes());
    }

    @Test
    void neverNegativeWhenTheHostIsFullOrTheCapIsPassed() {
        CapacityPolicy p = new CapacityPolicy(10 * GIB, 5 * GIB, 1.5);
        PoolCapacity hostFull = p.evaluate(new CapacityPolicy.Usage(0, 0, 0, 0, 0, 3 * GIB, 0, 50 * GIB));
        assertEquals(0, hostFull.availableBytes(), "free 3Gi is under the 5Gi reserve");
        assertEquals(0, hostFull.availableThickBytes());
        assertEquals("", hostFull.problem(), "a full host is not a configuration problem");

        // the cap lowered below what thin volumes hold: charged 20 / 1.5 > 10
        PoolCapacity passed = p.evaluate(new CapacityPolicy.Usage(20 * GIB, 0, 0, 0, 0, 100 * GIB, 0, 200 * GIB));
        assertEquals(0, passed.availableBytes());
        assertEquals(0, passed.availableThickBytes());
    }

    @Test
    void aReserveOfTheWholeHostFilesystemIsAProblemNamed() {
        CapacityPolicy p = new CapacityPolicy(10 * GIB, 600 * GIB, 1);
        PoolCapacity c = p.evaluate(new CapacityPolicy.Usage(0, 0, 0, 0, 0, 400 * GIB, 0, 500 * GIB));
        assertEquals(0, c.availableBytes());
        assertTrue(c.problem().contains("600Gi") && c.problem().contains("500Gi"), c.problem());
    }

    @Test
    void chargesRoundUpAndRatiosOutsideOneToAHundredAreRefused() {
        CapacityPolicy p = new CapacityPolicy(GIB, 0, 3);
        assertEquals(4, p.charge(10, false), "ceil(10 / 3): never under-charged");
        assertEquals(10, p.charge(10, true));
        assertThrows(IllegalArgumentException.class, () -> new CapacityPolicy(GIB, 0, 0.5));
        assertThrows(IllegalArgumentException.class, () -> new CapacityPolicy(GIB, 0, 101));
        assertThrows(IllegalArgumentException.class, () -> new CapacityPolicy(GIB, 0, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> new CapacityPolicy(GIB, -1, 1));
        assertEquals(Long.MAX_VALUE, new CapacityPolicy(Long.MAX_VALUE, 0, 100)
                .evaluate(new CapacityPolicy.Usage(0, 0, 0, 0, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE)).availableBytes(), "no overflow");
    }
}
