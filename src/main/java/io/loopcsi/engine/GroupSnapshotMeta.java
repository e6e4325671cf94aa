package io.loopcsi.engine;

import java.util.List;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What the pool directory records about a group snapshot: the member snapshots, taken of their
 * volumes at one instant (every mounted member frozen together). Written after every member
 * snapshot is committed: it is the group's commit point.
 *
 * @param sourceVolumeIds the volumes, sorted; snapshotIds in the same order
 */
@RegisterForReflection
public record GroupSnapshotMeta(String id, String name, List<String> sourceVolumeIds, List<String> snapshotIds, long createdAtMillis) {

    public GroupSnapshotMeta {
        sourceVolumeIds = List.copyOf(sourceVolumeIds);
        snapshotIds = List.copyOf(snapshotIds);
    }
}
