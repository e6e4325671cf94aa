package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;

/**
 * spec.transfer: the node-to-node transfer behind a restore or clone onto another node than its
 * source's (docs/architecture.md, "Transfer"). On unless turned off, so that an upgraded pool
 * restores across nodes without an edit; the bounds hold per node, on what it serves.
 */
public class PoolTransfer {

    @JsonPropertyDescription("Serve and fetch transfers between the pool's nodes, so that a restore or clone may be made on another node"
            + " than its source's; default true. false: no transfer port, no token in the node pods, and a restore or clone is made on its"
            + " source's node or refused (RESOURCE_EXHAUSTED). Changing it rolls the node pods.")
    @Default("true")
    private boolean enabled = true;

    @JsonPropertyDescription("The most bytes per second each node sends for transfers, all its transfers together (a quantity, e.g. 100Mi);"
            + " default unlimited. Below 1Mi is refused (Ready=False, InvalidTransfer).")
    @Pattern(StoragePoolSpec.QUANTITY)
    private String bandwidthPerNode;

    @JsonPropertyDescription("How many transfers each node serves at once, and fetches at once, 1 to 16; default 2. One more served is"
            + " refused (RESOURCE_EXHAUSTED) and its destination node tries again later; one more fetched waits in the destination's queue"
            + " (its LoopVolume's status.transfer phase Queued).")
    @Min(1)
    @Max(16)
    @Default("2")
    private int maxConcurrentPerNode = 2;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getBandwidthPerNode() {
        return bandwidthPerNode;
    }

    public void setBandwidthPerNode(String bandwidthPerNode) {
        this.bandwidthPerNode = bandwidthPerNode;
    }

    public int getMaxConcurrentPerNode() {
        return maxConcurrentPerNode;
    }

    public void setMaxConcurrentPerNode(int maxConcurrentPerNode) {
        this.maxConcurrentPerNode = maxConcurrentPerNode;
    }
}
