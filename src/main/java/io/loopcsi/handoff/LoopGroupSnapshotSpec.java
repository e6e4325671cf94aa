package io.loopcsi.handoff;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Required;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** A CreateVolumeGroupSnapshot request, placed on the one node holding every source volume. */
@RegisterForReflection
public class LoopGroupSnapshotSpec {

    @Required
    private String pool;
    private String driver;
    @JsonPropertyDescription("The node holding every source volume, where the group is made.")
    @Required
    private String node;
    @JsonPropertyDescription("The CreateVolumeGroupSnapshot request name; the group snapshot ID is derived from it.")
    @Required
    private String name;
    @JsonPropertyDescription("The volumes snapshotted together, sorted.")
    @Required
    private List<String> sourceVolumeIds = new ArrayList<>();
    @JsonPropertyDescription("Raised by the controller to have the node try a failed group snapshot again.")
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

    public List<String> getSourceVolumeIds() {
        return sourceVolumeIds;
    }

    public void setSourceVolumeIds(List<String> sourceVolumeIds) {
        this.sourceVolumeIds = sourceVolumeIds;
    }

    public Long getAttempt() {
        return attempt;
    }

    public void setAttempt(Long attempt) {
        this.attempt = attempt;
    }
}
