package io.loopcsi.handoff;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** The node's answer. */
@RegisterForReflection
public class LoopVolumeStatus extends HandoffStatus {

    private Boolean ready;
    @JsonPropertyDescription("The volume's size on disk in bytes; 0 until it is made.")
    private Long capacityBytes = 0L;
    @JsonPropertyDescription("capacityBytes as a quantity, for people.")
    private String capacity;
    @JsonPropertyDescription("When the node made the volume (RFC 3339).")
    private String createdAt;
    @JsonPropertyDescription("The mutable parameters applied on the node (the volume's metadata there); keys never set are defaults.")
    private Map<String, String> mutableParameters = new LinkedHashMap<>();
    @JsonPropertyDescription("A restore or clone from another node: the fetch's progress, then its end.")
    private TransferProgress transfer;
    @JsonPropertyDescription("The sector size of the volume's loop device (512 or 4096), kept for its life; a restore or clone on another node gets the same.")
    private Integer logicalBlockSize;

    public TransferProgress getTransfer() {
        return transfer;
    }

    public void setTransfer(TransferProgress transfer) {
        this.transfer = transfer;
    }

    public Boolean getReady() {
        return ready;
    }

    public void setReady(Boolean ready) {
        this.ready = ready;
    }

    public Long getCapacityBytes() {
        return capacityBytes;
    }

    public void setCapacityBytes(Long capacityBytes) {
        this.capacityBytes = capacityBytes;
    }

    public String getCapacity() {
        return capacity;
    }

    public void setCapacity(String capacity) {
        this.capacity = capacity;
    }

    public String getCreatedAt() {
        return createdAt;
    }

    public void setCreatedAt(String createdAt) {
        this.createdAt = createdAt;
    }

    public Map<String, String> getMutableParameters() {
        return mutableParameters;
    }

    public void setMutableParameters(Map<String, String> mutableParameters) {
        this.mutableParameters = mutableParameters;
    }

    // this kind's CRD descriptions of HandoffStatus' fields

    @Override
    @JsonPropertyDescription("Pending, Ready, Failed, DeleteFailed or Missing.")
    public String getPhase() {
        return super.getPhase();
    }

    @Override
    @JsonPropertyDescription("The gRPC status code of the node's last answer (OK, RESOURCE_EXHAUSTED, ...).")
    public String getCode() {
        return super.getCode();
    }

    @Override
    @JsonPropertyDescription("The spec generation this status answers.")
    public Long getObservedGeneration() {
        return super.getObservedGeneration();
    }
    public Integer getLogicalBlockSize() {
        return logicalBlockSize;
    }

    public void setLogicalBlockSize(Integer logicalBlockSize) {
        this.logicalBlockSize = logicalBlockSize;
    }
}
