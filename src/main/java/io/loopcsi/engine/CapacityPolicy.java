package io.loopcsi.engine;

/**
 * How a pool's space is counted on a node (issue 24, part 4): the hard cap, a host reserve and
 * an overcommit ratio for thin volumes. Pure.
 *
 * <ul>
 * <li>Against the cap ({@code capacityBytes}, the StoragePool's capacityPerNode) thick volumes and
 * snapshots are charged their full size, thin volumes their size divided by the ratio: with ratio
 * 2, thin volumes of 200Gi in all fit a 100Gi cap.</li>
 * <li>Against the host the rule never relaxes: free space minus the reserve minus what existing
 * images may still write (every thin image at its full unwritten size) bounds every new volume.
 * Overcommit lets allocated sizes exceed the cap, never the host's free space, so a thin volume
 * still never finds the host full before itself (a full host under a loop device is an I/O error
 * inside the volume: data loss), and the LoopcsiHostFilesystemOvercommitted alert keeps meaning
 * what it says.</li>
 * </ul>
 *
 * @param capacityBytes the hard cap
 * @param hostReserveBytes free space of the host filesystem the pool never counts as its own
 * @param thinOvercommit how far thin volumes' sizes may exceed the cap: 1 (none) to {@link #MAX_OVERCOMMIT}
 */
public record CapacityPolicy(long capacityBytes, long hostReserveBytes, double thinOvercommit) {

    public static final double MAX_OVERCOMMIT = 100;

    public CapacityPolicy {
        if (capacityBytes < 0 || hostReserveBytes < 0) {
            throw new IllegalArgumentException("capacity and host reserve cannot be negative");
        }
        if (!(thinOvercommit >= 1 && thinOvercommit <= MAX_OVERCOMMIT)) {
            throw new IllegalArgumentException("the thin overcommit ratio must lie in [1, " + (int) MAX_OVERCOMMIT + "], not " + thinOvercommit);
        }
    }

    /** A cap alone: no reserve, no overcommit (what every pool had before issue 24). */
    public static CapacityPolicy cap(long capacityBytes) {
        return new CapacityPolicy(capacityBytes, 0, 1);
    }

    /**
     * What the pool holds on this node now.
     *
     * @param thinBytes sizes of the thin volumes
     * @param thickBytes sizes of the thick volumes
     * @param snapshotBytes sizes of the snapshots and of the transfers' copies of volumes (full copies: charged in full)
     * @param inFlightBytes sizes of the creates and expansions admitted but not committed yet
     * @param inFlightCharged what those are charged against the cap
     * @param hostFreeBytes free space of the host filesystem under the pool
     * @param promisedBytes what existing images may still write on the host (their unwritten part), in-flight sizes included
     * @param hostSizeBytes size of the host filesystem under the pool
     */
    public record Usage(long thinBytes, long thickBytes, long snapshotBytes, long inFlightBytes, long inFlightCharged,
            long hostFreeBytes, long promisedBytes, long hostSizeBytes) {
    }

    /** What a volume of this size is charged against the cap. */
    public long charge(long bytes, boolean thick) {
        return thick || thinOvercommit == 1 ? bytes : (long) Math.ceil(bytes / thinOvercommit);
    }

    public PoolCapacity evaluate(Usage u) {
        long allocated = u.thinBytes() + u.thickBytes() + u.snapshotBytes() + u.inFlightBytes();
        long charged = charge(u.thinBytes(), false) + u.thickBytes() + u.snapshotBytes() + u.inFlightCharged();
        long hostRoom = u.hostFreeBytes() - hostReserveBytes - u.promisedBytes();
        long capRoom = capacityBytes - charged;
        long thick = Math.max(0, Math.min(capRoom, hostRoom));
        long thin = Math.max(0, Math.min(capRoom <= 0 ? 0 : scaled(capRoom), hostRoom));
        return new PoolCapacity(capacityBytes, allocated, u.hostFreeBytes(), u.promisedBytes(), thin, thick, charged, hostReserveBytes,
                thinOvercommit, problem(u.hostSizeBytes()));
    }

    /**
     * A configuration under which the pool can take no volume at all, as one sentence; "" when none.
     * A reserve of at least the host filesystem's size is one (a reserve larger than what is free
     * today is not: that is a full host, and the available figure says so).
     */
    public String problem(long hostSizeBytes) {
        if (hostReserveBytes > 0 && hostSizeBytes > 0 && hostReserveBytes >= hostSizeBytes) {
            return "the host reserve " + Sizes.format(hostReserveBytes) + " is not less than the size of the host filesystem under the pool ("
                    + Sizes.format(hostSizeBytes) + "): the pool can take no volume on this node";
        }
        return "";
    }

    /** A ratio as an admin writes it: 2 for 2.0, 1.5 for 1.5 (what --thin-overcommit takes). */
    public static String format(double ratio) {
        return ratio == Math.rint(ratio) ? String.valueOf((long) ratio) : String.valueOf(ratio);
    }

    private long scaled(long bytes) {
        double d = Math.floor(bytes * thinOvercommit);
        return d >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) d;
    }
}
