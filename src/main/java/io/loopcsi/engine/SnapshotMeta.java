package io.loopcsi.engine;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What the pool directory records about a snapshot: a point-in-time copy of a volume's image.
 *
 * @param groupSnapshotId the group snapshot it was taken in, or null
 * @param logicalBlockSize its source's sector size, which a volume restored from it keeps
 *        ({@link SectorSizes}); 0 when the source had none recorded
 */
@RegisterForReflection
public record SnapshotMeta(String id, String name, String sourceVolumeId, long sizeBytes, VolumeMode sourceMode,
        String sourceFsType, long createdAtMillis, String groupSnapshotId, int logicalBlockSize) {

    /** A snapshot whose source's sector size is not recorded. */
    public SnapshotMeta(String id, String name, String sourceVolumeId, long sizeBytes, VolumeMode sourceMode, String sourceFsType,
            long createdAtMillis, String groupSnapshotId) {
        this(id, name, sourceVolumeId, sizeBytes, sourceMode, sourceFsType, createdAtMillis, groupSnapshotId, 0);
    }

    /** A snapshot of one volume, in no group. */
    public SnapshotMeta(String id, String name, String sourceVolumeId, long sizeBytes, VolumeMode sourceMode, String sourceFsType,
            long createdAtMillis) {
        this(id, name, sourceVolumeId, sizeBytes, sourceMode, sourceFsType, createdAtMillis, null);
    }
}
