package io.loopcsi.handoff;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** The node's answer. */
@RegisterForReflection
public class LoopVolumeStatus {

    @JsonPropertyDescription("Pending, Ready, Failed, DeleteFailed or Missing.")
    private String phase;
    private Boolean ready;
    @JsonPropertyDescription("The volume's size on disk in bytes; 0 until it is made.")
    private Long capacityBytes = 0L;
    @JsonPropertyDescription("capacityBytes as a quantity, for people.")
    private String capacity;
    @JsonPropertyDescription("The gRPC status code of the node's last answer (OK, RESOURCE_EXHAUSTED, ...).")
    private String code;
    private String message;
    @JsonPropertyDescription("The spec generation this status answers.")
    private Long observedGeneration;
    @JsonPropertyDescription("When the node made the volume (RFC 3339).")
    private String createdAt;
    @JsonPropertyDescription("The mutable parameters applied on the node (the volume's metadata there); keys never set are defaults.")
    private Map<String, String> mutableParameters = new LinkedHashMap<>();

    public String getPhase() {
        return phase;
    }

    public void setPhase(String phase) {
        this.phase = phase;
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

    public String getCode() {
        return code;
    }

    public void setCode(String code) {
        this.code = code;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
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
}
