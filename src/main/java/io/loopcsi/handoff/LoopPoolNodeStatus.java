package io.loopcsi.handoff;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** What the node reports about its part of the pool (engine.PoolCapacity, and what it found on disk). */
@RegisterForReflection
public class LoopPoolNodeStatus {

    @JsonPropertyDescription("The pool's configured capacity on this node, bytes.")
    private Long totalBytes = 0L;
    @JsonPropertyDescription("Provisioned: volume capacities, snapshot sizes, creates in flight.")
    private Long allocatedBytes = 0L;
    @JsonPropertyDescription("Free space of the host filesystem under the pool directory.")
    private Long hostFreeBytes = 0L;
    @JsonPropertyDescription("The largest thin volume that fits now: min((total - charged) x thinOvercommit, host free - host reserve - promised).")
    private Long availableBytes = 0L;
    @JsonPropertyDescription("The largest thick volume that fits now: min(total - charged, host free - host reserve - promised);"
            + " absent from a node older than the field (availableBytes then holds for both).")
    private Long availableThickBytes;
    @JsonPropertyDescription("What the capacity is charged: thick volumes and snapshots in full, thin volumes their size / thinOvercommit.")
    private Long chargedBytes;
    @JsonPropertyDescription("Free space of the host filesystem the pool never counts as available (the StoragePool's hostReserve).")
    private Long hostReserveBytes;
    @JsonPropertyDescription("How far thin volumes' sizes may exceed the capacity (the StoragePool's thinOvercommit; 1: not at all).")
    private Double thinOvercommit;
    @JsonPropertyDescription("A configuration under which this node's part of the pool can take no volume (e.g. a host reserve not"
            + " smaller than the host filesystem); empty when none.")
    private String capacityProblem;
    private String capacity;
    private String allocated;
    private String available;
    private Integer volumes = 0;
    private Integer snapshots = 0;
    @JsonPropertyDescription("When the node last wrote this status (RFC 3339); a stale heartbeat means the node is not serving.")
    private String heartbeatTime;
    @JsonPropertyDescription("The SHA-256 (hex) of the certificate this node's transfer server presents, made at the node process' start;"
            + " a peer pins it (docs/architecture.md, Transfer). Absent while the node serves no transfers.")
    private String transferCertificateSha256;
    @JsonPropertyDescription("Where this node's transfer server is reached (host:port); a destination node calls it with the pin above."
            + " Absent while the node serves no transfers.")
    private String transferAddress;
    @JsonPropertyDescription("Volume and snapshot IDs on disk that no LoopVolume/LoopSnapshot names (kept, never deleted by loopcsi).")
    private List<String> unclaimed = new ArrayList<>();
    @JsonPropertyDescription("LoopVolume/LoopSnapshot names whose backing file is gone from this node.")
    private List<String> missing = new ArrayList<>();
    @JsonPropertyDescription("Abandoned transfers: a fetch from another node (partial image and progress) into a volume that no LoopVolume"
            + " of this node names any more, each with its files and sizes; the node deletes them once no LoopTransfer authorises the"
            + " transfer either (a CreateVolume asked again for the same volume goes on with them until then).")
    private List<String> abandonedTransfers = new ArrayList<>();
    @JsonPropertyDescription("Volumes of this node whose CSI volume condition is abnormal, each with why (e.g. a thick volume whose "
            + "image lost blocks the node cannot allocate again); GetVolume and ListVolumes answer it. A list, not a map: the node's "
            + "merge patch of its status replaces a list whole, where it would only add to a map's keys.")
    private List<AbnormalVolume> abnormalVolumes = new ArrayList<>();

    /** A volume whose condition is abnormal on this node, and why. */
    public static class AbnormalVolume {

        private String volumeId;
        private String message;

        public AbnormalVolume() {
        }

        public AbnormalVolume(String volumeId, String message) {
            this.volumeId = volumeId;
            this.message = message;
        }

        public String getVolumeId() {
            return volumeId;
        }

        public void setVolumeId(String volumeId) {
            this.volumeId = volumeId;
        }

        public String getMessage() {
            return message;
        }

        public void setMessage(String message) {
            this.message = message;
        }
    }
    @JsonPropertyDescription("How many IDs are unclaimed (the list holds at most 50).")
    private Integer unclaimedCount = 0;
    @JsonPropertyDescription("How many objects are missing their files (the list holds at most 50).")
    private Integer missingCount = 0;
    @JsonPropertyDescription("How many abandoned transfers are on disk (the list holds at most 50).")
    private Integer abandonedTransferCount = 0;
    private String message;

    public Long getTotalBytes() {
        return totalBytes;
    }

    public void setTotalBytes(Long totalBytes) {
        this.totalBytes = totalBytes;
    }

    public Long getAllocatedBytes() {
        return allocatedBytes;
    }

    public void setAllocatedBytes(Long allocatedBytes) {
        this.allocatedBytes = allocatedBytes;
    }

    public Long getHostFreeBytes() {
        return hostFreeBytes;
    }

    public void setHostFreeBytes(Long hostFreeBytes) {
        this.hostFreeBytes = hostFreeBytes;
    }

    public Long getAvailableBytes() {
        return availableBytes;
    }

    public void setAvailableBytes(Long availableBytes) {
        this.availableBytes = availableBytes;
    }

    public String getCapacity() {
        return capacity;
    }

    public void setCapacity(String capacity) {
        this.capacity = capacity;
    }

    public String getAllocated() {
        return allocated;
    }

    public void setAllocated(String allocated) {
        this.allocated = allocated;
    }

    public String getAvailable() {
        return available;
    }

    public void setAvailable(String available) {
        this.available = available;
    }

    public Integer getVolumes() {
        return volumes;
    }

    public void setVolumes(Integer volumes) {
        this.volumes = volumes;
    }

    public Integer getSnapshots() {
        return snapshots;
    }

    public void setSnapshots(Integer snapshots) {
        this.snapshots = snapshots;
    }

    public String getHeartbeatTime() {
        return heartbeatTime;
    }

    public void setHeartbeatTime(String heartbeatTime) {
        this.heartbeatTime = heartbeatTime;
    }

    public String getTransferCertificateSha256() {
        return transferCertificateSha256;
    }

    public void setTransferCertificateSha256(String transferCertificateSha256) {
        this.transferCertificateSha256 = transferCertificateSha256;
    }

    public String getTransferAddress() {
        return transferAddress;
    }

    public void setTransferAddress(String transferAddress) {
        this.transferAddress = transferAddress;
    }

    public List<String> getUnclaimed() {
        return unclaimed;
    }

    public void setUnclaimed(List<String> unclaimed) {
        this.unclaimed = unclaimed;
    }

    public List<String> getMissing() {
        return missing;
    }

    public void setMissing(List<String> missing) {
        this.missing = missing;
    }

    public List<AbnormalVolume> getAbnormalVolumes() {
        return abnormalVolumes;
    }

    public void setAbnormalVolumes(List<AbnormalVolume> abnormalVolumes) {
        this.abnormalVolumes = abnormalVolumes;
    }

    /** Why the node finds volumeId abnormal, or null when it does not. */
    public String abnormal(String volumeId) {
        if (abnormalVolumes != null) {
            for (AbnormalVolume a : abnormalVolumes) {
                if (volumeId.equals(a.getVolumeId())) {
                    return a.getMessage();
                }
            }
        }
        return null;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public Integer getUnclaimedCount() {
        return unclaimedCount;
    }

    public void setUnclaimedCount(Integer unclaimedCount) {
        this.unclaimedCount = unclaimedCount;
    }

    public List<String> getAbandonedTransfers() {
        return abandonedTransfers;
    }

    public void setAbandonedTransfers(List<String> abandonedTransfers) {
        this.abandonedTransfers = abandonedTransfers;
    }

    public Integer getAbandonedTransferCount() {
        return abandonedTransferCount;
    }

    public void setAbandonedTransferCount(Integer abandonedTransferCount) {
        this.abandonedTransferCount = abandonedTransferCount;
    }

    public Integer getMissingCount() {
        return missingCount;
    }

    public void setMissingCount(Integer missingCount) {
        this.missingCount = missingCount;
    }

    public Long getAvailableThickBytes() {
        return availableThickBytes;
    }

    public void setAvailableThickBytes(Long availableThickBytes) {
        this.availableThickBytes = availableThickBytes;
    }

    public Long getChargedBytes() {
        return chargedBytes;
    }

    public void setChargedBytes(Long chargedBytes) {
        this.chargedBytes = chargedBytes;
    }

    public Long getHostReserveBytes() {
        return hostReserveBytes;
    }

    public void setHostReserveBytes(Long hostReserveBytes) {
        this.hostReserveBytes = hostReserveBytes;
    }

    public Double getThinOvercommit() {
        return thinOvercommit;
    }

    public void setThinOvercommit(Double thinOvercommit) {
        this.thinOvercommit = thinOvercommit;
    }

    public String getCapacityProblem() {
        return capacityProblem;
    }

    public void setCapacityProblem(String capacityProblem) {
        this.capacityProblem = capacityProblem;
    }

    /** The largest volume of this provisioning the node can take now, by its last report. */
    public long available(boolean thick) {
        long thin = availableBytes == null ? 0 : availableBytes;
        return thick && availableThickBytes != null ? availableThickBytes : thin;
    }
}
