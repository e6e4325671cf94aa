package io.loopcsi.engine;

/**
 * A pool's capacity on this node, as {@link CapacityPolicy} counts it.
 *
 * @param totalBytes the pool's configured capacity (the hard cap)
 * @param allocatedBytes provisioned: volume capacities, snapshot sizes, creates in flight (thin volumes may take it past the cap)
 * @param hostFreeBytes free space of the host filesystem under the pool
 * @param hostPromisedBytes host space existing volumes may still take: the unwritten part of their sparse images
 * @param availableBytes the largest thin volume that fits now: min((cap − charged) × overcommit, hostFree − reserve − promised), never negative
 * @param availableThickBytes the largest thick volume (or snapshot) that fits now: min(cap − charged, hostFree − reserve − promised)
 * @param chargedBytes what the cap is charged: thick volumes and snapshots in full, thin volumes their size / overcommit
 * @param hostReserveBytes free space the pool never counts as its own
 * @param thinOvercommit how far thin volumes may exceed the cap (1: not at all)
 * @param problem a configuration under which the pool can take nothing (CapacityPolicy#problem); "" when none
 */
public record PoolCapacity(long totalBytes, long allocatedBytes, long hostFreeBytes, long hostPromisedBytes, long availableBytes,
        long availableThickBytes, long chargedBytes, long hostReserveBytes, double thinOvercommit, String problem) {

    /** A segment the pool does not serve, or a node that cannot take volumes now. */
    public static final PoolCapacity NONE = new PoolCapacity(0, 0, 0, 0, 0, 0, 0, 0, 1, "");

    public PoolCapacity {
        problem = problem == null ? "" : problem;
    }

    /** The largest volume of this provisioning that fits now. */
    public long available(boolean thick) {
        return thick ? availableThickBytes : availableBytes;
    }
}
