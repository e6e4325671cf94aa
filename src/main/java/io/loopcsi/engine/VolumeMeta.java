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
 * @param mutableParameters the keys of {@link MutableParameters} set at create or by a modify
 */
@RegisterForReflection
public record VolumeMeta(String id, String name, long capacityBytes, VolumeMode mode, String fsType,
        String sourceSnapshotId, String sourceVolumeId, Map<String, String> parameters, long createdAtMillis,
        Map<String, String> mutableParameters) {

    public VolumeMeta {
        parameters = parameters == null ? Map.of() : Map.copyOf(parameters);
        mutableParameters = mutableParameters == null ? Map.of() : Map.copyOf(mutableParameters);
        fsType = fsType == null ? "" : fsType;
    }

    /** A volume without mutable parameters (all defaults). */
    public VolumeMeta(String id, String name, long capacityBytes, VolumeMode mode, String fsType, String sourceSnapshotId,
            String sourceVolumeId, Map<String, String> parameters, long createdAtMillis) {
        this(id, name, capacityBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis, Map.of());
    }

    public VolumeMeta withCapacity(long bytes) {
        return new VolumeMeta(id, name, bytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis,
                mutableParameters);
    }

    public VolumeMeta withMutable(MutableParameters m) {
        return new VolumeMeta(id, name, capacityBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis,
                m.given());
    }

    /** The mutable parameters in force (defaults for keys never set). */
    public MutableParameters mutable() {
        return new MutableParameters(mutableParameters);
    }
}
