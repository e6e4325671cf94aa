package io.loopcsi.handoff;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The controller's authorisation of one node-to-node transfer, named {@code <pool>.<transfer ID>}
 * (docs/architecture.md, "Transfer"): one source object on one source node, to one destination
 * node, inside one time window. The source node serves the transfer only while an object names it
 * (transfer.TransferGrant.check); nothing in its status: the progress is the destination's.
 */
@CSVMetadata(displayName = "Loop Transfer", description = "Internal: the authorisation of one transfer of a volume's content between two nodes")
@Group(HandoffNames.GROUP)
@Version(HandoffNames.VERSION)
@ShortNames("looptransfer")
@RegisterForReflection
@AdditionalPrinterColumn(name = "Pool", jsonPath = ".spec.pool", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Source", jsonPath = ".spec.source", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "From", jsonPath = ".spec.sourceNode", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "To", jsonPath = ".spec.destinationNode", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Not After", jsonPath = ".spec.notAfter", type = AdditionalPrinterColumn.Type.DATE)
public class LoopTransfer extends CustomResource<LoopTransferSpec, Void> {

    public LoopTransfer() {
    }

    public LoopTransfer(String name, LoopTransferSpec spec) {
        getMetadata().setName(name);
        setSpec(spec);
    }
}
