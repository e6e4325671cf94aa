package io.loopcsi.handoff;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * One snapshot of a pool, internal: named {@code <pool>.<snapshot ID>}, made by the node that
 * holds its source volume; restores from it land on that node too.
 */
@CSVMetadata(displayName = "Loop Snapshot", description = "Internal: one snapshot of a pool, made by the node holding its source volume")
@Group(HandoffNames.GROUP)
@Version(HandoffNames.VERSION)
@ShortNames("loopsnap")
@RegisterForReflection
@AdditionalPrinterColumn(name = "Node", jsonPath = ".spec.node", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Source", jsonPath = ".spec.sourceVolumeId", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Size", jsonPath = ".status.size", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class LoopSnapshot extends CustomResource<LoopSnapshotSpec, LoopSnapshotStatus> implements HandoffObject {

    public LoopSnapshot() {
    }

    public LoopSnapshot(String name, LoopSnapshotSpec spec) {
        getMetadata().setName(name);
        setSpec(spec);
    }

    @Override
    public boolean created() {
        return getStatus() != null && getStatus().getSizeBytes() != null && getStatus().getSizeBytes() > 0;
    }

    @Override
    public boolean answered() {
        return getStatus() != null && getStatus().answers(getMetadata().getGeneration());
    }
}
