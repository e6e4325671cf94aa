package io.loopcsi.handoff;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** The node's answer to a LoopGroupSnapshot. */
@RegisterForReflection
public class LoopGroupSnapshotStatus extends HandoffStatus {

    private Boolean readyToUse;
    @JsonPropertyDescription("The member snapshots on the node, one per source volume (empty until the group is made).")
    private List<Member> members = new ArrayList<>();
    @JsonPropertyDescription("RFC 3339 time the group was cut (every member at that instant).")
    private String creationTime;

    /** One member snapshot: an ordinary snapshot on the node, restorable by CreateVolume. */
    @RegisterForReflection
    public static class Member {

        private String snapshotId;
        private String sourceVolumeId;
        private Long sizeBytes = 0L;
        @JsonPropertyDescription("The sector size of the member's source volume (512 or 4096): a restore, on any node, gets the same.")
        private Integer logicalBlockSize;

        public Member() {
        }

        public Member(String snapshotId, String sourceVolumeId, long sizeBytes, Integer logicalBlockSize) {
            this(snapshotId, sourceVolumeId, sizeBytes);
            this.logicalBlockSize = logicalBlockSize;
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

        public Integer getLogicalBlockSize() {
            return logicalBlockSize;
        }

        public void setLogicalBlockSize(Integer logicalBlockSize) {
            this.logicalBlockSize = logicalBlockSize;
        }
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

    // this kind's CRD descriptions of HandoffStatus' fields

    @Override
    @JsonPropertyDescription("Pending, Ready, Failed, DeleteFailed or Missing.")
    public String getPhase() {
        return super.getPhase();
    }

    @Override
    @JsonPropertyDescription("The gRPC status code of the node's last answer (OK, NOT_FOUND, ...).")
    public String getCode() {
        return super.getCode();
    }

    @Override
    @JsonPropertyDescription("The spec generation this status answers.")
    public Long getObservedGeneration() {
        return super.getObservedGeneration();
    }
}
