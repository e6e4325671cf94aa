package io.loopcsi.engine;

import java.util.Map;

/** A request for a new volume, in engine terms. fsType is empty for block volumes. */
public record CreateRequest(String name, long requiredBytes, long limitBytes, VolumeMode mode, String fsType,
        String sourceSnapshotId, String sourceVolumeId, Map<String, String> parameters, MutableParameters mutable) {

    public CreateRequest {
        mutable = mutable == null ? MutableParameters.NONE : mutable;
    }

    /** A request without mutable parameters. */
    public CreateRequest(String name, long requiredBytes, long limitBytes, VolumeMode mode, String fsType, String sourceSnapshotId,
            String sourceVolumeId, Map<String, String> parameters) {
        this(name, requiredBytes, limitBytes, mode, fsType, sourceSnapshotId, sourceVolumeId, parameters, MutableParameters.NONE);
    }
}
