package io.loopcsi.transfer;

import java.util.regex.Pattern;

/**
 * What the source announces before the first chunk and the destination persists with its
 * progress: which transfer, of which source object, the image's size, the chunk size, the data
 * ranges that will travel, the format the chunks are hashed in ({@link DigestFormat}) and the
 * content digest ({@link ContentDigest}) the destination must arrive at. The destination accepts
 * nothing outside these ranges.
 */
public record TransferPlan(String transferId, String source, long size, int chunkSize, RangeList ranges, DigestFormat format,
        String digest) {

    /** Transfer IDs name a file in the destination's data dir: a strict alphabet, no path. */
    static final Pattern ID = Pattern.compile("[a-z0-9][a-z0-9.-]{0,126}");
    private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");
    public static final int DEFAULT_CHUNK = 1 << 20;

    public TransferPlan {
        if (transferId == null || !ID.matcher(transferId).matches() || transferId.contains("..")) {
            throw TransferException.invalid("transfer ID " + transferId + " is not of [a-z0-9.-], 1-127 characters, starting alphanumeric");
        }
        if (chunkSize < 64 * 1024 || chunkSize > 64 * 1024 * 1024 || Integer.bitCount(chunkSize) != 1) {
            throw TransferException.invalid("chunk size " + chunkSize + " is not a power of two between 64 KiB and 64 MiB");
        }
        if (ranges == null || ranges.size() != size) {
            throw TransferException.invalid("the ranges are of an image of " + (ranges == null ? "no" : ranges.size()) + " bytes, the plan of "
                    + size);
        }
        if (format == null) {
            throw TransferException.invalid("the plan names no digest format");
        }
        if (digest == null || !HEX.matcher(digest).matches()) {
            throw TransferException.invalid("digest " + digest + " is not 64 lower-case hex digits (a SHA-256)");
        }
    }

    public long chunks() {
        return ContentDigest.chunks(size, chunkSize);
    }

    /** The bytes [start, end) of chunk i; INVALID for an index outside the image. */
    public Range chunk(long index) {
        if (index < 0 || index >= chunks()) {
            throw TransferException.invalid("chunk " + index + " is outside the image (" + chunks() + " chunks of " + chunkSize + " bytes)");
        }
        long start = index * chunkSize;
        return new Range(start, Math.min(chunkSize, size - start));
    }
}
