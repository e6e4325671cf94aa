package io.loopcsi.handoff;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * One group snapshot of a pool, internal: named {@code <pool>.<group snapshot ID>}, made by the
 * node that holds every source volume (node-local volumes can only be frozen together on one
 * host). Its members are ordinary snapshots on that node, listed in status; restores from them
 * land on that node too. Deleting it deletes the members behind the node's finalizer.
 */
@CSVMetadata(displayName = "Loop Group Snapshot", description = "Internal: one crash-consistent snapshot of several volumes of a pool on one node, made by that node")
@Group(HandoffNames.GROUP)
@Version(HandoffNames.VERSION)
@ShortNames("loopgroupsnap")
@RegisterForReflection
@AdditionalPrinterColumn(name = "Node", jsonPath = ".spec.node", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Volumes", jsonPath = ".spec.sourceVolumeIds", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class LoopGroupSnapshot extends CustomResource<LoopGroupSnapshotSpec, LoopGroupSnapshotStatus> implements HandoffObject {

    public LoopGroupSnapshot() {
    }

    public LoopGroupSnapshot(String name, LoopGroupSnapshotSpec spec) {
        getMetadata().setName(name);
        setSpec(spec);
    }

    /** True once the node has made the group (its members are on disk, whatever the last operation did). */
    @Override
    public boolean created() {
        return getStatus() != null && getStatus().getMembers() != null && !getStatus().getMembers().isEmpty();
    }

    @Override
    public boolean answered() {
        return getStatus() != null && getStatus().answers(getMetadata().getGeneration());
    }
}
