package io.loopcsi.cli.evacuate;

import java.time.Instant;
import java.util.List;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopVolume;

/**
 * What an evacuation plan is made from, as read from the API server at one moment: the LoopVolumes
 * of every pool, the LoopPoolNodes (capacity, heartbeat, transfer endpoint), PersistentVolumes,
 * claims and pods. {@link PlanBuilder} is a pure function of it.
 */
public record ClusterState(List<LoopVolume> volumes, List<LoopPoolNode> poolNodes, List<PersistentVolume> pvs,
        List<PersistentVolumeClaim> claims, List<Pod> pods, Instant now) {

    public ClusterState {
        volumes = List.copyOf(volumes);
        poolNodes = List.copyOf(poolNodes);
        pvs = List.copyOf(pvs);
        claims = List.copyOf(claims);
        pods = List.copyOf(pods);
    }
}
