package io.loopcsi.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.Condition;

/**
 * What the operator observed. Conditions Ready, Progressing, Degraded follow the Kubernetes
 * conventions (reason, message, lastTransitionTime, observedGeneration).
 */
public class StoragePoolStatus {

    @JsonPropertyDescription("The generation of the spec this status describes.")
    private Long observedGeneration;
    @JsonPropertyDescription("Ready, Progressing and Degraded, with reasons and messages.")
    private List<Condition> conditions = new ArrayList<>();
    @JsonPropertyDescription("Nodes that should run the pool's node plugin (from its DaemonSet).")
    private Integer desiredNodes;
    @JsonPropertyDescription("Nodes whose node plugin is ready.")
    private Integer readyNodes;
    @JsonPropertyDescription("Ready/desired nodes, e.g. 3/3.")
    private String nodes;
    @JsonPropertyDescription("Whether the controller Deployment has its replica available.")
    private Boolean controllerReady;
    @JsonPropertyDescription("Pool capacity: the sum the nodes report, else capacityPerNode x desired nodes.")
    private String capacity;
    @JsonPropertyDescription("Allocated: the sum the nodes report (volumes and snapshots), else the capacities of the pool's PersistentVolumes.")
    private String allocated;
    @JsonPropertyDescription("What new thin volumes may still take, summed over the nodes that report their capacity (thinOvercommit"
            + " counted in; what GetCapacity and the CSIStorageCapacity objects say).")
    private String available;
    @JsonPropertyDescription("What new thick volumes may still take (in full against capacityPerNode), summed over the reporting nodes.")
    private String availableThick;
    @JsonPropertyDescription("Nodes whose node plugin reports its capacity (a fresh LoopPoolNode heartbeat).")
    private Integer reportingNodes;
    @JsonPropertyDescription("Number of PersistentVolumes of the pool's driver.")
    private Integer volumes;
    @JsonPropertyDescription("The CSI driver name of the pool.")
    private String driverName;
    @JsonPropertyDescription("Nodes that do not serve the pool: heartbeat stale (NotReporting), or Node object deleted too (NodeDeleted),"
            + " each with its volumes.")
    private List<LostNode> lostNodes = new ArrayList<>();
    @JsonPropertyDescription("Orphans per node, from the nodes' disk audits: image files no LoopVolume/LoopSnapshot names (unclaimed) and"
            + " objects whose files are gone (missing), never deleted automatically; and abandoned transfers (a fetch's partial image into a"
            + " volume no LoopVolume names), which the node deletes once no LoopTransfer authorises the transfer.")
    private List<NodeOrphans> orphans = new ArrayList<>();
    @JsonPropertyDescription("Every object the operator made (or adopted) for the pool, by UID: it updates and deletes only these."
            + " Absent on a pool an older operator made: its objects at the names the pool wants are adopted.")
    private List<ManagedObject> managedObjects;
    @JsonPropertyDescription("Objects that carry the pool's marks (owner reference or labels) but that the operator did not make, e.g. a"
            + " copy of a pool's StorageClass: left alone, never updated or deleted; the pool's owner reference is taken off them"
            + " when the pool is deleted so that they stay.")
    private List<String> unmanagedCopies;

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public Integer getDesiredNodes() {
        return desiredNodes;
    }

    public void setDesiredNodes(Integer desiredNodes) {
        this.desiredNodes = desiredNodes;
    }

    public Integer getReadyNodes() {
        return readyNodes;
    }

    public void setReadyNodes(Integer readyNodes) {
        this.readyNodes = readyNodes;
    }

    public String getNodes() {
        return nodes;
    }

    public void setNodes(String nodes) {
        this.nodes = nodes;
    }

    public Boolean getControllerReady() {
        return controllerReady;
    }

    public void setControllerReady(Boolean controllerReady) {
        this.controllerReady = controllerReady;
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

    public Integer getVolumes() {
        return volumes;
    }

    public void setVolumes(Integer volumes) {
        this.volumes = volumes;
    }

    public String getAvailableThick() {
        return availableThick;
    }

    public void setAvailableThick(String availableThick) {
        this.availableThick = availableThick;
    }

    public String getAvailable() {
        return available;
    }

    public void setAvailable(String available) {
        this.available = available;
    }

    public Integer getReportingNodes() {
        return reportingNodes;
    }

    public void setReportingNodes(Integer reportingNodes) {
        this.reportingNodes = reportingNodes;
    }

    public String getDriverName() {
        return driverName;
    }

    public void setDriverName(String driverName) {
        this.driverName = driverName;
    }

    public List<LostNode> getLostNodes() {
        return lostNodes;
    }

    public void setLostNodes(List<LostNode> lostNodes) {
        this.lostNodes = lostNodes;
    }

    public List<ManagedObject> getManagedObjects() {
        return managedObjects;
    }

    public void setManagedObjects(List<ManagedObject> managedObjects) {
        this.managedObjects = managedObjects;
    }

    public List<String> getUnmanagedCopies() {
        return unmanagedCopies;
    }

    public void setUnmanagedCopies(List<String> unmanagedCopies) {
        this.unmanagedCopies = unmanagedCopies;
    }

    public List<NodeOrphans> getOrphans() {
        return orphans;
    }

    public void setOrphans(List<NodeOrphans> orphans) {
        this.orphans = orphans;
    }
}
