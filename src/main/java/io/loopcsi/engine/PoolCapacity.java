package io.loopcsi.engine;

/**
 * A pool's capacity on this node.
 *
 * @param totalBytes the pool's configured capacity
 * @param allocatedBytes provisioned: volume capacities, snapshot sizes, creates in flight
 * @param hostFreeBytes free space of the host filesystem under the pool
 * @param hostPromisedBytes host space existing volumes may still take: the unwritten part of their sparse images
 * @param availableBytes min(total − allocated, hostFree − hostPromised), never negative
 */
public record PoolCapacity(long totalBytes, long allocatedBytes, long hostFreeBytes, long hostPromisedBytes, long availableBytes) {
}
