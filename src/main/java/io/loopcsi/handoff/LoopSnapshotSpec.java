package io.loopcsi.handoff;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Required;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** A CreateSnapshot request, placed on the node of its source volume. */
@RegisterForReflection
public class LoopSnapshotSpec {

    @Required
    private String pool;
    private String driver;
    @JsonPropertyDescription("The node holding the source volume, where the snapshot is made.")
    @Required
    private String node;
    @JsonPropertyDescription("The CreateSnapshot request name; the snapshot ID is derived from it.")
    @Required
    private String name;
    @Required
    private String sourceVolumeId;
    @JsonPropertyDescription("Raised by the controller to have the node try a failed snapshot again.")
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

    public String getSourceVolumeId() {
        return sourceVolumeId;
    }

    public void setSourceVolumeId(String sourceVolumeId) {
        this.sourceVolumeId = sourceVolumeId;
    }

    public Long getAttempt() {
        return attempt;
    }

    public void setAttempt(Long attempt) {
        this.attempt = attempt;
    }
}
