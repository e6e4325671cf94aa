package io.loopcsi.operator.api;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;

/**
 * What the operator observed. Conditions Ready, Progressing, Degraded follow the Kubernetes
 * conventions (reason, message, lastTransitionTime, observedGeneration).
 */
public class StoragePoolStatus {

    private Long observedGeneration;
    private List<Condition> conditions = new ArrayList<>();
    /** Node pods: desired and ready (from the DaemonSet). */
    private Integer desiredNodes;
    private Integer readyNodes;
    /** "ready/desired", for the printer column. */
    private String nodes;
    /** Whether the controller Deployment has its replica available. */
    private Boolean controllerReady;
    /** Pool capacity: the sum the nodes report, else capacityPerNode x desired nodes. */
    private String capacity;
    /** Allocated: the sum the nodes report (volumes and snapshots), else the capacities of the pool's PersistentVolumes. */
    private String allocated;
    /** What new volumes may still take, summed over the nodes that report (LoopPoolNode). */
    private String available;
    /** Nodes whose node pod reports its capacity (a fresh LoopPoolNode heartbeat). */
    private Integer reportingNodes;
    /** Number of PersistentVolumes of this pool's driver. */
    private Integer volumes;
    private String driverName;

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
}
