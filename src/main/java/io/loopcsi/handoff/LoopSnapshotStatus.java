package io.loopcsi.handoff;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** The node's answer to a LoopSnapshot. */
@RegisterForReflection
public class LoopSnapshotStatus extends HandoffStatus {

    private Boolean readyToUse;
    private Long sizeBytes = 0L;
    private String size;
    /** RFC 3339 time the snapshot was cut. */
    private String creationTime;
    @JsonPropertyDescription("The sector size of the snapshot's source volume (512 or 4096): a restore, on any node, gets the same.")
    private Integer logicalBlockSize;

    public Boolean getReadyToUse() {
        return readyToUse;
    }

    public void setReadyToUse(Boolean readyToUse) {
        this.readyToUse = readyToUse;
    }

    public Long getSizeBytes() {
        return sizeBytes;
    }

    public void setSizeBytes(Long sizeBytes) {
        this.sizeBytes = sizeBytes;
    }

    public String getSize() {
        return size;
    }

    public void setSize(String size) {
        this.size = size;
    }

    public String getCreationTime() {
        return creationTime;
    }

    public void setCreationTime(String creationTime) {
        this.creationTime = creationTime;
    }
    public Integer getLogicalBlockSize() {
        return logicalBlockSize;
    }

    public void setLogicalBlockSize(Integer logicalBlockSize) {
        this.logicalBlockSize = logicalBlockSize;
    }
}
