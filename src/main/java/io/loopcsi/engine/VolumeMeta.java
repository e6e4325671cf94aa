package io.loopcsi.engine;

import java.util.Map;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What the pool directory records about a volume (its metadata file). Together with the image
 * file it is the whole truth about the volume: nothing about a volume lives only in memory.
 *
 * @param fsType empty for block volumes
 * @param sourceSnapshotId the snapshot it was restored from, or null
 * @param sourceVolumeId the volume it was cloned from, or null
 */
@RegisterForReflection
public record VolumeMeta(String id, String name, long capacityBytes, VolumeMode mode, String fsType,
        String sourceSnapshotId, String sourceVolumeId, Map<String, String> parameters, long createdAtMillis) {

    public VolumeMeta {
        parameters = parameters == null ? Map.of() : Map.copyOf(parameters);
        fsType = fsType == null ? "" : fsType;
    }

    public VolumeMeta withCapacity(long bytes) {
        return new VolumeMeta(id, name, bytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis);
    }
}
