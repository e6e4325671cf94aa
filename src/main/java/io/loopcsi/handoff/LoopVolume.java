package io.loopcsi.handoff;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * One volume of a pool, internal: the controller role creates it (named
 * {@code <pool>.<volume ID>}), the node named in {@code spec.node} makes the backing file and
 * answers in status. Deleting it deletes the volume's data on that node (behind the node's
 * finalizer), so it is never owned by anything that garbage collection could delete.
 */
@CSVMetadata(displayName = "Loop Volume", description = "Internal: one volume of a pool, written by the pool's controller and carried out by its node")
@Group(HandoffNames.GROUP)
@Version(HandoffNames.VERSION)
@ShortNames("loopvol")
@RegisterForReflection
@AdditionalPrinterColumn(name = "Node", jsonPath = ".spec.node", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Size", jsonPath = ".status.capacity", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Code", jsonPath = ".status.code", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class LoopVolume extends CustomResource<LoopVolumeSpec, LoopVolumeStatus> implements HandoffObject {

    public LoopVolume() {
    }

    public LoopVolume(String name, LoopVolumeSpec spec) {
        getMetadata().setName(name);
        setSpec(spec);
    }

    /** True once the node has made the volume (it exists on disk, whatever the last operation did). */
    @Override
    public boolean created() {
        return getStatus() != null && getStatus().getCapacityBytes() != null && getStatus().getCapacityBytes() > 0;
    }

    /** True when the node answered the current spec (success or failure). */
    @Override
    public boolean answered() {
        return getStatus() != null && getStatus().answers(getMetadata().getGeneration());
    }
}
