package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.ResourceRequirements;

/**
 * Requests and limits of the pool's containers, per role. Each is merged over that role's default
 * (operator/desired/ContainerResources): what is set here replaces the default of the same resource
 * name, the rest stays (every container keeps a memory limit).
 */
public class PoolResources {

    @JsonPropertyDescription("The loopcsi container of the controller Deployment; default requests memory 160Mi, cpu 20m, limits"
            + " memory 256Mi. A memory limit below 160Mi is refused (Ready=False, InvalidResources): the JVM does not fit.")
    private ResourceRequirements controller;

    @JsonPropertyDescription("The loopcsi container (and its doctor init container) of the node DaemonSet; default with spec.runtime"
            + " native requests memory 64Mi, cpu 20m, limits memory 128Mi (a limit below 64Mi is refused), with jvm requests 192Mi,"
            + " limits 256Mi (below 160Mi refused: Ready=False, InvalidResources).")
    private ResourceRequirements node;

    @JsonPropertyDescription("Each CSI sidecar of the controller Deployment (csi-provisioner, csi-resizer, csi-snapshotter); default"
            + " requests memory 32Mi, cpu 10m, limits memory 400Mi (csi-snapshotter 200Mi). A memory limit below 20Mi is refused.")
    private ResourceRequirements sidecars;

    public ResourceRequirements getController() {
        return controller;
    }

    public void setController(ResourceRequirements controller) {
        this.controller = controller;
    }

    public ResourceRequirements getNode() {
        return node;
    }

    public void setNode(ResourceRequirements node) {
        this.node = node;
    }

    public ResourceRequirements getSidecars() {
        return sidecars;
    }

    public void setSidecars(ResourceRequirements sidecars) {
        this.sidecars = sidecars;
    }
}
