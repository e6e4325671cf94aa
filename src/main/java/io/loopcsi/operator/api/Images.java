package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;

/**
 * Images of the driver and its sidecars. Defaults are the sidecar releases this version was
 * written against (registry.k8s.io/sig-storage) and the loopcsi image of the same version.
 */
public class Images {

    public static final String LOOPCSI = "ghcr.io/loopcsi/loopcsi:0.1.0";
    /** The native image of the same version (src/main/docker/Dockerfile.native): the pool's default (spec.runtime). */
    public static final String LOOPCSI_NATIVE = LOOPCSI + "-native";
    public static final String PROVISIONER = "registry.k8s.io/sig-storage/csi-provisioner:v6.3.0";
    public static final String RESIZER = "registry.k8s.io/sig-storage/csi-resizer:v2.2.1";
    public static final String SNAPSHOTTER = "registry.k8s.io/sig-storage/csi-snapshotter:v8.6.0";
    public static final String NODE_DRIVER_REGISTRAR = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.14.0";
    public static final String LIVENESS_PROBE = "registry.k8s.io/sig-storage/livenessprobe:v2.16.0";

    @JsonPropertyDescription("The loopcsi JVM image (controller and node roles with spec.runtime jvm).")
    @Default(LOOPCSI)
    private String loopcsi = LOOPCSI;

    @JsonPropertyDescription("The loopcsi native image (controller and node roles with spec.runtime native, the default).")
    @Default(LOOPCSI_NATIVE)
    private String loopcsiNative = LOOPCSI_NATIVE;

    @Default(PROVISIONER)
    private String provisioner = PROVISIONER;

    @Default(RESIZER)
    private String resizer = RESIZER;

    @Default(SNAPSHOTTER)
    private String snapshotter = SNAPSHOTTER;

    @JsonPropertyDescription("Deprecated and ignored: the node plugin registers itself with kubelet, no node-driver-registrar "
            + "runs. Kept so that pools written for 0.1.0 stay valid.")
    @Default(NODE_DRIVER_REGISTRAR)
    private String nodeDriverRegistrar = NODE_DRIVER_REGISTRAR;

    @JsonPropertyDescription("Deprecated and ignored: kubelet probes each loopcsi container's own /q/health, no livenessprobe "
            + "sidecar runs. Kept so that pools written for 0.1.0 stay valid.")
    @Default(LIVENESS_PROBE)
    private String livenessProbe = LIVENESS_PROBE;

    @JsonPropertyDescription("imagePullPolicy of every container; default IfNotPresent.")
    @Default("IfNotPresent")
    private PullPolicy pullPolicy = PullPolicy.IfNotPresent;

    public enum PullPolicy {
        Always,
        IfNotPresent,
        Never
    }

    public String getLoopcsi() {
        return loopcsi;
    }

    public void setLoopcsi(String loopcsi) {
        this.loopcsi = loopcsi;
    }

    public String getLoopcsiNative() {
        return loopcsiNative;
    }

    public void setLoopcsiNative(String loopcsiNative) {
        this.loopcsiNative = loopcsiNative;
    }

    public String getProvisioner() {
        return provisioner;
    }

    public void setProvisioner(String provisioner) {
        this.provisioner = provisioner;
    }

    public String getResizer() {
        return resizer;
    }

    public void setResizer(String resizer) {
        this.resizer = resizer;
    }

    public String getSnapshotter() {
        return snapshotter;
    }

    public void setSnapshotter(String snapshotter) {
        this.snapshotter = snapshotter;
    }

    public String getNodeDriverRegistrar() {
        return nodeDriverRegistrar;
    }

    public void setNodeDriverRegistrar(String nodeDriverRegistrar) {
        this.nodeDriverRegistrar = nodeDriverRegistrar;
    }

    public String getLivenessProbe() {
        return livenessProbe;
    }

    public void setLivenessProbe(String livenessProbe) {
        this.livenessProbe = livenessProbe;
    }

    public PullPolicy getPullPolicy() {
        return pullPolicy;
    }

    public void setPullPolicy(PullPolicy pullPolicy) {
        this.pullPolicy = pullPolicy;
    }
}
