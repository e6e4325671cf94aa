package io.loopcsi.handoff;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Required;
import io.loopcsi.engine.VolumeMode;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** What the controller asks of the node: a CreateVolume request, placed. */
@RegisterForReflection
public class LoopVolumeSpec {

    @JsonPropertyDescription("StoragePool name.")
    @Required
    private String pool;
    @JsonPropertyDescription("CSI driver name of the pool.")
    private String driver;
    @JsonPropertyDescription("The node that holds the volume (the topology segment topology.loopcsi.io/node).")
    @Required
    private String node;
    @JsonPropertyDescription("The CreateVolume request name; the volume ID is derived from it.")
    @Required
    private String name;
    @JsonPropertyDescription("capacity_range.required_bytes: raised by an expansion.")
    private Long requiredBytes = 0L;
    @JsonPropertyDescription("capacity_range.limit_bytes; 0 for no limit.")
    private Long limitBytes = 0L;
    @Required
    private VolumeMode mode;
    @JsonPropertyDescription("xfs or ext4; empty for block volumes.")
    private String fsType = "";
    @JsonPropertyDescription("Content source: the snapshot it is restored from.")
    private String sourceSnapshotId;
    @JsonPropertyDescription("Content source: the volume it is cloned from.")
    private String sourceVolumeId;
    @JsonPropertyDescription("Cross-node restore or clone: the node that holds the content source; absent when it is this volume's node.")
    private String sourceNode;
    @JsonPropertyDescription("Cross-node restore or clone: the transfer (its LoopTransfer <pool>.<transferId>) that brings the source's "
            + "content from sourceNode.")
    private String transferId;
    private Map<String, String> parameters = new LinkedHashMap<>();
    @JsonPropertyDescription("Mutable parameters wanted (provisioning: thin|thick, directIO: auto|on|off): set at CreateVolume, "
            + "changed by ControllerModifyVolume; the node applies them and reports what is applied in status.")
    private Map<String, String> mutableParameters = new LinkedHashMap<>();
    @JsonPropertyDescription("Raised by the controller to have the node try a failed operation again.")
    private Long attempt = 0L;

    public String getPool() {
        return pool;
    }

    public void setPool(String pool) {
        this.pool = pool;
    }

    public String getDriver() {
        return driver;
    }

    public void setDriver(String driver) {
        this.driver = driver;
    }

    public String getNode() {
        return node;
    }

    public void setNode(String node) {
        this.node = node;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Long getRequiredBytes() {
        return requiredBytes;
    }

    public void setRequiredBytes(Long requiredBytes) {
        this.requiredBytes = requiredBytes;
    }

    public Long getLimitBytes() {
        return limitBytes;
    }

    public void setLimitBytes(Long limitBytes) {
        this.limitBytes = limitBytes;
    }

    public VolumeMode getMode() {
        return mode;
    }

    public void setMode(VolumeMode mode) {
        this.mode = mode;
    }

    public String getFsType() {
        return fsType;
    }

    public void setFsType(String fsType) {
        this.fsType = fsType;
    }

    public String getSourceSnapshotId() {
        return sourceSnapshotId;
    }

    public void setSourceSnapshotId(String sourceSnapshotId) {
        this.sourceSnapshotId = sourceSnapshotId;
    }

    public String getSourceVolumeId() {
        return sourceVolumeId;
    }

    public void setSourceVolumeId(String sourceVolumeId) {
        this.sourceVolumeId = sourceVolumeId;
    }

    public String getSourceNode() {
        return sourceNode;
    }

    public void setSourceNode(String sourceNode) {
        this.sourceNode = sourceNode;
    }

    public String getTransferId() {
        return transferId;
    }

    public void setTransferId(String transferId) {
        this.transferId = transferId;
    }

    public Map<String, String> getParameters() {
        return parameters;
    }

    public void setParameters(Map<String, String> parameters) {
        this.parameters = parameters;
    }

    public Map<String, String> getMutableParameters() {
        return mutableParameters;
    }

    public void setMutableParameters(Map<String, String> mutableParameters) {
        this.mutableParameters = mutableParameters;
    }

    public Long getAttempt() {
        return attempt;
    }

    public void setAttempt(Long attempt) {
        this.attempt = attempt;
    }
}
