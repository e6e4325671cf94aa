package io.loopcsi.transfer;

import java.util.List;

/**
 * What travels for one chunk of the image: the data segments inside it (only the planned data
 * ranges; the rest of the chunk is zeros, holes or not) and the chunk's hash
 * ({@link ContentDigest#chunkHash}), which the destination checks before it writes anything.
 */
public record Chunk(long index, List<Segment> segments, byte[] hash) {

    public long dataBytes() {
        long n = 0;
        for (Segment s : segments) {
            n += s.length();
        }
        return n;
    }
}
