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
 * @param logicalBlockSize the sector size of its loop device, 512 or 4096, fixed for the volume's
 *        life ({@link SectorSizes}); 0 in metadata written before it was recorded
 */
@RegisterForReflection
public record VolumeMeta(String id, String name, long capacityBytes, VolumeMode mode, String fsType,
        String sourceSnapshotId, String sourceVolumeId, Map<String, String> parameters, long createdAtMillis,
        Map<String, String> mutableParameters, int logicalBlockSize) {

    public VolumeMeta {
        parameters = parameters == null ? Map.of() : Map.copyOf(parameters);
        mutableParameters = mutableParameters == null ? Map.of() : Map.copyOf(mutableParameters);
        fsType = fsType == null ? "" : fsType;
    }

    /** A volume whose sector size is not recorded (yet). */
    public VolumeMeta(String id, String name, long capacityBytes, VolumeMode mode, String fsType, String sourceSnapshotId,
            String sourceVolumeId, Map<String, String> parameters, long createdAtMillis, Map<String, String> mutableParameters) {
        this(id, name, capacityBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis, mutableParameters, 0);
    }

    /** A volume without mutable parameters (all defaults). */
    public VolumeMeta(String id, String name, long capacityBytes, VolumeMode mode, String fsType, String sourceSnapshotId,
            String sourceVolumeId, Map<String, String> parameters, long createdAtMillis) {
        this(id, name, capacityBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis, Map.of(), 0);
    }

    public VolumeMeta withCapacity(long bytes) {
        return new VolumeMeta(id, name, bytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis,
                mutableParameters, logicalBlockSize);
    }

    public VolumeMeta withMutable(MutableParameters m) {
        return new VolumeMeta(id, name, capacityBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis,
                m.given(), logicalBlockSize);
    }

    public VolumeMeta withLogicalBlockSize(int bytes) {
        return new VolumeMeta(id, name, capacityBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, createdAtMillis,
                mutableParameters, bytes);
    }

    /** The mutable parameters in force (defaults for keys never set). */
    public MutableParameters mutable() {
        return new MutableParameters(mutableParameters);
    }
}
