package io.loopcsi.cli.evacuate;

import java.time.Instant;
import java.util.List;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.StoragePool;

/**
 * What an evacuation plan is made from, as read from the API server at one moment: the LoopVolumes
 * of every pool, the LoopPoolNodes (capacity, heartbeat, transfer endpoint), PersistentVolumes,
 * claims and pods; for the rules a target must meet ({@link TargetRules}) the StorageClasses, the
 * Nodes and the StoragePools; for what stays behind, the LoopSnapshots and LoopGroupSnapshots and
 * the VolumeSnapshotContents naming them (empty where the snapshot API is not installed).
 * {@link PlanBuilder} is a pure function of it.
 */
public record ClusterState(List<LoopVolume> volumes, List<LoopPoolNode> poolNodes, List<PersistentVolume> pvs,
        List<PersistentVolumeClaim> claims, List<Pod> pods, List<StorageClass> storageClasses, List<Node> nodes, List<StoragePool> pools,
        List<LoopSnapshot> snapshots, List<LoopGroupSnapshot> groupSnapshots, List<GenericKubernetesResource> snapshotContents, Instant now) {

    public ClusterState {
        snapshots = List.copyOf(snapshots);
        groupSnapshots = List.copyOf(groupSnapshots);
        snapshotContents = List.copyOf(snapshotContents);
        storageClasses = List.copyOf(storageClasses);
        nodes = List.copyOf(nodes);
        pools = List.copyOf(pools);
        volumes = List.copyOf(volumes);
        poolNodes = List.copyOf(poolNodes);
        pvs = List.copyOf(pvs);
        claims = List.copyOf(claims);
        pods = List.copyOf(pods);
    }
}
