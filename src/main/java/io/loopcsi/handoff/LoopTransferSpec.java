package io.loopcsi.handoff;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** What one transfer is authorised for; written by the controller, read by the source node. */
@RegisterForReflection
public class LoopTransferSpec {

    @Required
    private String pool;
    @Required
    @Pattern("^[a-z0-9][a-z0-9.-]{0,126}$")
    @JsonPropertyDescription("The transfer's ID (derived from the destination volume's ID): the destination's progress file is named by it.")
    private String transferId;
    @Required
    @JsonPropertyDescription("The source object on the source node: a volume ID (vol-...) or a snapshot ID (snap-...).")
    private String source;
    @Required
    private String sourceNode;
    @Required
    private String destinationNode;
    @JsonPropertyDescription("The volume the transfer makes on the destination node.")
    private String destinationVolumeId;
    @Min(0)
    @JsonPropertyDescription("The source's size in bytes; the destination volume's must be the same.")
    private Long sizeBytes;
    @JsonPropertyDescription("The source's sector size (512 or 4096): the destination volume's loop device gets the same (its filesystem or partition table was made for it). Absent: the destination derives it from the content.")
    private Integer logicalBlockSize;
    @Required
    @JsonPropertyDescription("The start of the window in which the source serves the transfer (RFC 3339).")
    private String notBefore;
    @Required
    @JsonPropertyDescription("The end of the window (RFC 3339): at most 24 h after notBefore.")
    private String notAfter;

    public LoopTransferSpec() {
    }

    public String getPool() {
        return pool;
    }

    public void setPool(String pool) {
        this.pool = pool;
    }

    public String getTransferId() {
        return transferId;
    }

    public void setTransferId(String transferId) {
        this.transferId = transferId;
    }

    public String getSource() {
        return source;
    }

    public void setSource(String source) {
        this.source = source;
    }

    public String getSourceNode() {
        return sourceNode;
    }

    public void setSourceNode(String sourceNode) {
        this.sourceNode = sourceNode;
    }

    public String getDestinationNode() {
        return destinationNode;
    }

    public void setDestinationNode(String destinationNode) {
        this.destinationNode = destinationNode;
    }

    public String getDestinationVolumeId() {
        return destinationVolumeId;
    }

    public void setDestinationVolumeId(String destinationVolumeId) {
        this.destinationVolumeId = destinationVolumeId;
    }

    public Long getSizeBytes() {
        return sizeBytes;
    }

    public void setSizeBytes(Long sizeBytes) {
        this.sizeBytes = sizeBytes;
    }

    public String getNotBefore() {
        return notBefore;
    }

    public void setNotBefore(String notBefore) {
        this.notBefore = notBefore;
    }

    public String getNotAfter() {
        return notAfter;
    }

    public void setNotAfter(String notAfter) {
        this.notAfter = notAfter;
    }
    public Integer getLogicalBlockSize() {
        return logicalBlockSize;
    }

    public void setLogicalBlockSize(Integer logicalBlockSize) {
        this.logicalBlockSize = logicalBlockSize;
    }
}
