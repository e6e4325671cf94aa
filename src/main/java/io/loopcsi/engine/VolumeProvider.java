package io.loopcsi.engine;

import java.util.List;
import java.util.Optional;

/**
 * What the CSI Controller service needs from storage: the seam between the Controller and where
 * volumes live. The standalone role plugs in the local {@link VolumeEngine}; the controller role
 * plugs in a provider that writes intent to the Kubernetes API for the node to carry out.
 * Every method is idempotent; failures are {@link EngineException}s.
 */
public interface VolumeProvider {

    VolumeMeta createVolume(CreateRequest request);

    /** Deleting a volume that does not exist succeeds. */
    void deleteVolume(String volumeId);

    Optional<VolumeMeta> volume(String volumeId);

    /** All volumes, sorted by ID. */
    List<VolumeMeta> volumes();

    Condition condition(String volumeId);

    /** Grows a volume to the capacity range; a volume already that large is returned as it is. */
    VolumeMeta expandVolume(String volumeId, long requiredBytes, long limitBytes);

    SnapshotMeta createSnapshot(String name, String sourceVolumeId);

    void deleteSnapshot(String snapshotId);

    Optional<SnapshotMeta> snapshot(String snapshotId);

    /** All snapshots, sorted by ID. */
    List<SnapshotMeta> snapshots();

    PoolCapacity capacity();

    /** The node whose volumes this provider serves (the topology segment of every volume). */
    String nodeId();
}
