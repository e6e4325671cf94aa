package io.loopcsi.engine;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What the pool directory records about a snapshot: a point-in-time copy of a volume's image.
 *
 * @param groupSnapshotId the group snapshot it was taken in, or null
 */
@RegisterForReflection
public record SnapshotMeta(String id, String name, String sourceVolumeId, long sizeBytes, VolumeMode sourceMode,
        String sourceFsType, long createdAtMillis, String groupSnapshotId) {

    /** A snapshot of one volume, in no group. */
    public SnapshotMeta(String id, String name, String sourceVolumeId, long sizeBytes, VolumeMode sourceMode, String sourceFsType,
            long createdAtMillis) {
        this(id, name, sourceVolumeId, sizeBytes, sourceMode, sourceFsType, createdAtMillis, null);
    }
}
