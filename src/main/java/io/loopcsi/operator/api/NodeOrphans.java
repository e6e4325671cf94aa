package io.loopcsi.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One node's orphans, as its node plugin last reported them (LoopPoolNode status). */
public class NodeOrphans {

    @JsonPropertyDescription("The node.")
    private String node;
    @JsonPropertyDescription("Volume and snapshot IDs whose files are in the pool directory but that no LoopVolume/LoopSnapshot names"
            + " (kept; loopcsi doctor --data-dir DIR --remove-orphan ID removes one on purpose).")
    private Integer unclaimed;
    @JsonPropertyDescription("LoopVolumes/LoopSnapshots whose files are gone from the node (their data is lost).")
    private Integer missing;
    @JsonPropertyDescription("The first unclaimed IDs.")
    private List<String> unclaimedIds = new ArrayList<>();
    @JsonPropertyDescription("The first objects whose files are gone.")
    private List<String> missingObjects = new ArrayList<>();
    @JsonPropertyDescription("Abandoned transfers: fetches from another node (a partial image and its progress) into a volume no LoopVolume"
            + " names any more; the node deletes them once no LoopTransfer authorises the transfer.")
    private Integer abandonedTransfers;
    @JsonPropertyDescription("The first abandoned transfers, each with its files and sizes.")
    private List<String> abandonedTransferFiles = new ArrayList<>();

    public NodeOrphans() {
    }

    public NodeOrphans(String node, int unclaimed, int missing, List<String> unclaimedIds, List<String> missingObjects) {
        this.node = node;
        this.unclaimed = unclaimed;
        this.missing = missing;
        this.unclaimedIds = unclaimedIds;
        this.missingObjects = missingObjects;
    }

    public NodeOrphans(String node, int unclaimed, int missing, List<String> unclaimedIds, List<String> missingObjects, int abandonedTransfers,
            List<String> abandonedTransferFiles) {
        this(node, unclaimed, missing, unclaimedIds, missingObjects);
        this.abandonedTransfers = abandonedTransfers;
        this.abandonedTransferFiles = abandonedTransferFiles;
    }

    public Integer getAbandonedTransfers() {
        return abandonedTransfers;
    }

    public void setAbandonedTransfers(Integer abandonedTransfers) {
        this.abandonedTransfers = abandonedTransfers;
    }

    public List<String> getAbandonedTransferFiles() {
        return abandonedTransferFiles;
    }

    public void setAbandonedTransferFiles(List<String> abandonedTransferFiles) {
        this.abandonedTransferFiles = abandonedTransferFiles;
    }

    public String getNode() {
        return node;
    }

    public void setNode(String node) {
        this.node = node;
    }

    public Integer getUnclaimed() {
        return unclaimed;
    }

    public void setUnclaimed(Integer unclaimed) {
        this.unclaimed = unclaimed;
    }

    public Integer getMissing() {
        return missing;
    }

    public void setMissing(Integer missing) {
        this.missing = missing;
    }

    public List<String> getUnclaimedIds() {
        return unclaimedIds;
    }

    public void setUnclaimedIds(List<String> unclaimedIds) {
        this.unclaimedIds = unclaimedIds;
    }

    public List<String> getMissingObjects() {
        return missingObjects;
    }

    public void setMissingObjects(List<String> missingObjects) {
        this.missingObjects = missingObjects;
    }
}
