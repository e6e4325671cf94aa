package io.loopcsi.handoff;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * A pool on one node, named {@code <pool>.<node>}: the node role writes its status (capacity,
 * counts, what it found on disk, a heartbeat). The controller's GetCapacity and placement read
 * it; the operator sums them into the StoragePool's status.
 */
@CSVMetadata(displayName = "Loop Pool Node", description = "Internal: a pool's capacity and health on one node, written by that node")
@Group(HandoffNames.GROUP)
@Version(HandoffNames.VERSION)
@ShortNames("loopnode")
@RegisterForReflection
@AdditionalPrinterColumn(name = "Pool", jsonPath = ".spec.pool", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Node", jsonPath = ".spec.node", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Capacity", jsonPath = ".status.capacity", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Allocated", jsonPath = ".status.allocated", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Available", jsonPath = ".status.available", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Volumes", jsonPath = ".status.volumes", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Heartbeat", jsonPath = ".status.heartbeatTime", type = AdditionalPrinterColumn.Type.DATE)
public class LoopPoolNode extends CustomResource<LoopPoolNodeSpec, LoopPoolNodeStatus> {

    public LoopPoolNode() {
    }

    public LoopPoolNode(String name, LoopPoolNodeSpec spec) {
        getMetadata().setName(name);
        setSpec(spec);
    }
}
