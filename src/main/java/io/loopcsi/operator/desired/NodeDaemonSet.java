package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.loopcsi.operator.api.Images;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's node plugin on every selected node: loopcsi in the node role (privileged: loop
 * devices from the host's /dev, mounts that must propagate back to kubelet, so the kubelet
 * directory is mounted Bidirectional), node-driver-registrar (registers the socket with kubelet)
 * and livenessprobe. The pool's backing directory is a hostPath at the same path.
 */
public final class NodeDaemonSet {

    public static final String KUBELET_DIR = "/var/lib/kubelet";

    private NodeDaemonSet() {
    }

    public static DaemonSet desired(StoragePool pool, String namespace) {
        Images img = Sidecars.images(pool);
        String pull = Sidecars.pullPolicy(pool);
        String pluginDir = KUBELET_DIR + "/plugins/" + pool.driverName();
        SecurityContext privileged = new SecurityContextBuilder().withPrivileged(true).build();
        SecurityContext sidecar = Sidecars.unprivileged();
        Map<String, String> selector = pool.getSpec().getNodeSelector();

        return new DaemonSetBuilder()
                .withNewMetadata().withName(PoolNames.node(pool)).withNamespace(namespace)
                .withLabels(PoolNames.labels(pool, CsiRbac.NODE)).endMetadata()
                .withNewSpec()
                .withNewSelector().withMatchLabels(PoolNames.selector(pool, CsiRbac.NODE)).endSelector()
                .withNewUpdateStrategy().withType("RollingUpdate").endUpdateStrategy()
                .withNewTemplate()
                .withNewMetadata().withLabels(PoolNames.labels(pool, CsiRbac.NODE)).endMetadata()
                .withNewSpec()
                .withServiceAccountName(PoolNames.node(pool))
                .withNodeSelector(selector == null || selector.isEmpty() ? null : new LinkedHashMap<>(selector))
                .withTolerations(pool.getSpec().getTolerations() == null || pool.getSpec().getTolerations().isEmpty() ? null
                        : pool.getSpec().getTolerations())
                .addNewContainer().withName("loopcsi")
                .withImage(Sidecars.orDefault(img.getLoopcsi(), Images.LOOPCSI)).withImagePullPolicy(pull)
                .withArgs("node", "--endpoint", "unix://" + Sidecars.SOCKET, "--driver-name", pool.driverName(),
                        "--node-id", "$(NODE_NAME)", "--data-dir", pool.backingDir(), "--capacity", pool.getSpec().getCapacityPerNode())
                .withEnv(Sidecars.fieldEnv("NODE_NAME", "spec.nodeName"))
                .addNewPort().withName("metrics").withContainerPort(Sidecars.METRICS_PORT).withProtocol("TCP").endPort()
                .addNewPort().withName("healthz").withContainerPort(Sidecars.HEALTH_PORT).withProtocol("TCP").endPort()
                .withNewLivenessProbe().withNewHttpGet().withPath("/healthz").withPort(new IntOrString("healthz")).endHttpGet()
                .withInitialDelaySeconds(10).withPeriodSeconds(20).withTimeoutSeconds(3).withFailureThreshold(5).endLivenessProbe()
                .withVolumeMounts(Sidecars.socketMount(),
                        new VolumeMountBuilder().withName("kubelet-dir").withMountPath(KUBELET_DIR).withMountPropagation("Bidirectional").build(),
                        new VolumeMountBuilder().withName("dev").withMountPath("/dev").build(),
                        new VolumeMountBuilder().withName("backing-dir").withMountPath(pool.backingDir()).build())
                .withResources(Sidecars.driverResources(pool))
                .withSecurityContext(privileged)
                .endContainer()
                .addNewContainer().withName("node-driver-registrar")
                .withImage(Sidecars.orDefault(img.getNodeDriverRegistrar(), Images.NODE_DRIVER_REGISTRAR)).withImagePullPolicy(pull)
                .withArgs("--csi-address=" + Sidecars.SOCKET, "--kubelet-registration-path=" + pluginDir + "/csi.sock",
                        "--http-endpoint=:9809")
                .addNewPort().withName("registrar").withContainerPort(9809).withProtocol("TCP").endPort()
                .withNewLivenessProbe().withNewHttpGet().withPath("/healthz").withPort(new IntOrString("registrar")).endHttpGet()
                .withInitialDelaySeconds(5).withTimeoutSeconds(5).endLivenessProbe()
                .withVolumeMounts(Sidecars.socketMount(),
                        new VolumeMountBuilder().withName("registration-dir").withMountPath("/registration").build())
                .withResources(Sidecars.sidecarResources())
                .withSecurityContext(sidecar)
                .endContainer()
                .addToContainers(Sidecars.livenessProbe(pool, Sidecars.HEALTH_PORT, sidecar))
                .withVolumes(List.of(
                        hostPath(Sidecars.SOCKET_VOLUME, pluginDir, "DirectoryOrCreate"),
                        hostPath("registration-dir", KUBELET_DIR + "/plugins_registry", "Directory"),
                        hostPath("kubelet-dir", KUBELET_DIR, "Directory"),
                        hostPath("dev", "/dev", "Directory"),
                        hostPath("backing-dir", pool.backingDir(), "DirectoryOrCreate")))
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    private static Volume hostPath(String name, String path, String type) {
        return new VolumeBuilder().withName(name).withNewHostPath().withPath(path).withType(type).endHostPath().build();
    }
}
