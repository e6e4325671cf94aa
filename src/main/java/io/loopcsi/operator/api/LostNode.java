package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A node of the pool that does not serve it: its heartbeat is stale, and maybe its Node object is gone. */
public class LostNode {

    @JsonPropertyDescription("The node.")
    private String node;
    @JsonPropertyDescription("NotReporting (its node plugin's heartbeat is stale, the Node object exists: it may come back with its volumes)"
            + " or NodeDeleted (the Node object is gone as well: its volumes will not come back).")
    private String reason;
    @JsonPropertyDescription("The node plugin's last heartbeat (RFC 3339); empty when it never reported.")
    private String lastHeartbeat;
    @JsonPropertyDescription("LoopVolumes of the pool on the node.")
    private Integer volumes;
    @JsonPropertyDescription("Their capacity, bytes.")
    private Long volumeBytes;

    public LostNode() {
    }

    public LostNode(String node, String reason, String lastHeartbeat, int volumes, long volumeBytes) {
        this.node = node;
        this.reason = reason;
        this.lastHeartbeat = lastHeartbeat;
        this.volumes = volumes;
        this.volumeBytes = volumeBytes;
    }

    public String getNode() {
        return node;
    }

    public void setNode(String node) {
        this.node = node;
    }

    public String getReason() {
        return reason;
    }

    public void setReason(String reason) {
        this.reason = reason;
    }

    public String getLastHeartbeat() {
        return lastHeartbeat;
    }

    public void setLastHeartbeat(String lastHeartbeat) {
        this.lastHeartbeat = lastHeartbeat;
    }

    public Integer getVolumes() {
        return volumes;
    }

    public void setVolumes(Integer volumes) {
        this.volumes = volumes;
    }

    public Long getVolumeBytes() {
        return volumeBytes;
    }

    public void setVolumeBytes(Long volumeBytes) {
        this.volumeBytes = volumeBytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LostNode l && java.util.Objects.equals(node, l.node) && java.util.Objects.equals(reason, l.reason)
                && java.util.Objects.equals(lastHeartbeat, l.lastHeartbeat) && java.util.Objects.equals(volumes, l.volumes)
                && java.util.Objects.equals(volumeBytes, l.volumeBytes);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(node, reason, lastHeartbeat, volumes, volumeBytes);
    }

    @Override
    public String toString() {
        return node + " (" + reason + ")";
    }
}
