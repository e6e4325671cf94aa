package io.loopcsi.engine;

/**
 * A pool's capacity on this node. available = min(total - allocated, what the host filesystem
 * under the pool can still hold): sparse images can promise more than the disk has, so the
 * host's free space bounds every admission too.
 */
public record PoolCapacity(long totalBytes, long allocatedBytes, long hostFreeBytes, long availableBytes) {
}
