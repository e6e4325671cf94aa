package io.loopcsi.engine;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** What the pool directory records about a snapshot: a point-in-time copy of a volume's image. */
@RegisterForReflection
public record SnapshotMeta(String id, String name, String sourceVolumeId, long sizeBytes, VolumeMode sourceMode,
        String sourceFsType, long createdAtMillis) {
}
