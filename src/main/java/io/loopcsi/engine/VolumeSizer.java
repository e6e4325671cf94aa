package io.loopcsi.engine;

/**
 * Turns a CSI capacity range into the size a volume gets: whole MiB, at least the filesystem's
 * minimum (rounded up to it when the limit allows, refused when it does not), never above the
 * limit. A pure function.
 */
public final class VolumeSizer {

    public static final long DEFAULT_BYTES = Sizes.GIB;

    private VolumeSizer() {
    }

    /**
     * @param required 0 = unspecified
     * @param limit 0 = unspecified
     * @param minimum the smallest size the volume may have
     * @param minimumReason why, for the error message: "xfs volumes need at least 300Mi"
     */
    public static long size(long required, long limit, long minimum, String minimumReason) {
        if (required < 0 || limit < 0) {
            throw EngineException.invalid("capacity_range: required_bytes (" + required + ") and limit_bytes (" + limit
                    + ") must not be negative");
        }
        if (limit > 0 && required > limit) {
            throw EngineException.invalid("capacity_range: required_bytes " + required + " is larger than limit_bytes " + limit);
        }
        if (required > Sizes.MAX_VOLUME_BYTES) {
            throw EngineException.outOfRange("capacity_range: required_bytes " + required + " is above the largest volume loopcsi makes ("
                    + Sizes.format(Sizes.MAX_VOLUME_BYTES) + ")");
        }
        long size;
        if (required == 0) {
            size = limit > 0 ? Math.min(DEFAULT_BYTES, limit / Sizes.MIB * Sizes.MIB) : DEFAULT_BYTES;
        } else {
            size = Sizes.roundUpToMiB(required);
        }
        if (size < minimum) {
            size = Sizes.roundUpToMiB(minimum);
        }
        if (limit > 0 && size > limit) {
            if (minimum > limit) {
                throw EngineException.outOfRange(minimumReason + ", but limit_bytes is " + limit
                        + "; raise the limit to at least " + Sizes.roundUpToMiB(minimum));
            }
            throw EngineException.outOfRange("capacity_range: volumes are sized in whole MiB and no whole MiB lies between required_bytes "
                    + required + " and limit_bytes " + limit);
        }
        return size;
    }
}
