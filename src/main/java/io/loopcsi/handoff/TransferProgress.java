package io.loopcsi.handoff;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * A LoopVolume's content fetched from another node (issue 35), as the destination node writes it:
 * while under way at most every 2 s or 5% (TransferFetch), then once more with the end. The
 * controller reads the end for the claim's Events.
 */
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TransferProgress {

    /** Waiting for one of the destination's fetch slots (its most fetches at once run); reason says where in the queue. */
    public static final String QUEUED = "Queued";
    public static final String TRANSFERRING = "Transferring";
    public static final String DONE = "Done";
    public static final String FAILED = "Failed";

    @JsonPropertyDescription("Queued (the destination runs its most fetches at once), Transferring, Done or Failed.")
    private String phase;
    @JsonPropertyDescription("The node the content comes from.")
    private String sourceNode;
    @JsonPropertyDescription("Bytes of data received and checked so far (holes are not sent).")
    private Long bytesDone;
    @JsonPropertyDescription("Bytes of data the source planned to send.")
    private Long bytesTotal;
    @JsonPropertyDescription("Bytes per second since the fetch started.")
    private Long bytesPerSecond;
    @JsonPropertyDescription("When the fetch started (RFC 3339).")
    private String startedAt;
    @JsonPropertyDescription("When this was written (RFC 3339).")
    private String updatedAt;
    @JsonPropertyDescription("Why the fetch failed (phase Failed), or what it waits for (phase Queued).")
    private String reason;

    public String getPhase() {
        return phase;
    }

    public void setPhase(String phase) {
        this.phase = phase;
    }

    public String getSourceNode() {
        return sourceNode;
    }

    public void setSourceNode(String sourceNode) {
        this.sourceNode = sourceNode;
    }

    public Long getBytesDone() {
        return bytesDone;
    }

    public void setBytesDone(Long bytesDone) {
        this.bytesDone = bytesDone;
    }

    public Long getBytesTotal() {
        return bytesTotal;
    }

    public void setBytesTotal(Long bytesTotal) {
        this.bytesTotal = bytesTotal;
    }

    public Long getBytesPerSecond() {
        return bytesPerSecond;
    }

    public void setBytesPerSecond(Long bytesPerSecond) {
        this.bytesPerSecond = bytesPerSecond;
    }

    public String getStartedAt() {
        return startedAt;
    }

    public void setStartedAt(String startedAt) {
        this.startedAt = startedAt;
    }

    public String getUpdatedAt() {
        return updatedAt;
    }

    public void setUpdatedAt(String updatedAt) {
        this.updatedAt = updatedAt;
    }

    public String getReason() {
        return reason;
    }

    public void setReason(String reason) {
        this.reason = reason;
    }
}
