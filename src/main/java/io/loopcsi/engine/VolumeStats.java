package io.loopcsi.engine;

/** What NodeGetVolumeStats reports. inode figures are -1 for block volumes. */
public record VolumeStats(long totalBytes, long availableBytes, long usedBytes, long totalInodes, long freeInodes,
        Condition condition) {
}
