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

    /**
     * Creates a volume on a node the placement allows. A provider of one node refuses a placement
     * that excludes it (RESOURCE_EXHAUSTED: no room there); a provider of many nodes chooses one.
     */
    default VolumeMeta createVolume(CreateRequest request, Placement placement) {
        if (!placement.allows(nodeId())) {
            throw EngineException.exhausted("accessibility_requirements: no requisite topology includes node " + nodeId()
                    + " (topology.loopcsi.io/node)");
        }
        return createVolume(request);
    }

    /** The node a volume lives on (its accessible topology). */
    default String nodeOf(String volumeId) {
        return nodeId();
    }

    /**
     * The largest volume a CreateVolume could make now in a node's segment (null: anywhere in the
     * pool). A volume lives on one node, so for a pool of many nodes this is the most any single
     * node has available, not their sum.
     */
    default long largestVolumeBytes(String node, boolean thick) {
        return capacity(node).available(thick);
    }

    /** Capacity of one node's segment (null: the whole pool); a node this provider does not serve has none. */
    default PoolCapacity capacity(String node) {
        return node == null || node.equals(nodeId()) ? capacity() : PoolCapacity.NONE;
    }

    /** Whether {@link #modifyVolume} works here (the MODIFY_VOLUME capability). */
    default boolean modifiable() {
        return false;
    }

    /**
     * Applies mutable parameters (already checked) on top of the volume's; idempotent. A provider
     * that cannot: UNIMPLEMENTED.
     */
    default VolumeMeta modifyVolume(String volumeId, MutableParameters changes) {
        throw EngineException.unimplemented("ControllerModifyVolume: this role's volume provider cannot change mutable parameters "
                + "(MODIFY_VOLUME is not advertised here)");
    }

    /** Whether group snapshots work here (the GroupController's CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT). */
    default boolean groupSnapshots() {
        return false;
    }

    /** One crash-consistent snapshot of every source volume; idempotent by name. */
    default GroupSnapshotMeta createGroupSnapshot(String name, List<String> sourceVolumeIds) {
        throw groupsUnimplemented();
    }

    /** Deletes the group and its member snapshots; a group that does not exist is deleted. */
    default void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
        throw groupsUnimplemented();
    }

    default Optional<GroupSnapshotMeta> groupSnapshot(String groupSnapshotId) {
        throw groupsUnimplemented();
    }

    private static EngineException groupsUnimplemented() {
        return EngineException.unimplemented("volume group snapshots: this role's volume provider cannot take them "
                + "(CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT is not advertised here)");
    }
}
