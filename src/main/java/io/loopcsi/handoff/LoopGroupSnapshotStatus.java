package io.loopcsi.handoff;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** The node's answer to a LoopGroupSnapshot. */
@RegisterForReflection
public class LoopGroupSnapshotStatus {

    @JsonPropertyDescription("Pending, Ready, Failed, DeleteFailed or Missing.")
    private String phase;
    private Boolean readyToUse;
    @JsonPropertyDescription("The member snapshots on the node, one per source volume (empty until the group is made).")
    private List<Member> members = new ArrayList<>();
    @JsonPropertyDescription("RFC 3339 time the group was cut (every member at that instant).")
    private String creationTime;
    @JsonPropertyDescription("The gRPC status code of the node's last answer (OK, NOT_FOUND, ...).")
    private String code;
    private String message;
    @JsonPropertyDescription("The spec generation this status answers.")
    private Long observedGeneration;

    /** One member snapshot: an ordinary snapshot on the node, restorable by CreateVolume. */
    @RegisterForReflection
    public static class Member {

        private String snapshotId;
        private String sourceVolumeId;
        private Long sizeBytes = 0L;

        public Member() {
        }

        public Member(String snapshotId, String sourceVolumeId, long sizeBytes) {
            this.snapshotId = snapshotId;
            this.sourceVolumeId = sourceVolumeId;
            this.sizeBytes = sizeBytes;
        }

        public String getSnapshotId() {
            return snapshotId;
        }

        public void setSnapshotId(String snapshotId) {
            this.snapshotId = snapshotId;
        }

        public String getSourceVolumeId() {
            return sourceVolumeId;
        }

        public void setSourceVolumeId(String sourceVolumeId) {
            this.sourceVolumeId = sourceVolumeId;
        }

        public Long getSizeBytes() {
            return sizeBytes;
        }

        public void setSizeBytes(Long sizeBytes) {
            this.sizeBytes = sizeBytes;
        }
    }

    public String getPhase() {
        return phase;
    }

    public void setPhase(String phase) {
        this.phase = phase;
    }

    public Boolean getReadyToUse() {
        return readyToUse;
    }

    public void setReadyToUse(Boolean readyToUse) {
        this.readyToUse = readyToUse;
    }

    public List<Member> getMembers() {
        return members;
    }

    public void setMembers(List<Member> members) {
        this.members = members;
    }

    public String getCreationTime() {
        return creationTime;
    }

    public void setCreationTime(String creationTime) {
        this.creationTime = creationTime;
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
}
