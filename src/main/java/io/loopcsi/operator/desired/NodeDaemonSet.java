package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.loopcsi.operator.api.PoolRuntime;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's node plugin on every selected node: ONE container, loopcsi in the node role, after
 * an init container running {@code loopcsi doctor} on the same mounts (exit 1, with its verdict as
 * the termination message, on a node that cannot host the pool). It
 * registers itself with kubelet (a socket in plugins_registry, no node-driver-registrar) and its
 * liveness is its own /q/health (no livenessprobe sidecar). Privileged: loop devices from the
 * host's /dev, and mounts that must propagate back to kubelet, so the kubelet directory (with the
 * CSI socket under plugins/ and the registration socket under plugins_registry/) is mounted
 * Bidirectional at the same path. The pool's backing directory is a hostPath at the same path.
 * With spec.transfer.enabled (the default) the container also serves transfers to the pool's other
 * nodes ({@link NodeTransfer}: a port, the pod IP, a projected token).
 */
public final class NodeDaemonSet {

    public static final String KUBELET_DIR = "/var/lib/kubelet";

    private NodeDaemonSet() {
    }

    public static String csiSocket(StoragePool pool) {
        return KUBELET_DIR + "/plugins/" + pool.driverName() + "/csi.sock";
    }

    public static String registrationSocket(StoragePool pool) {
        return KUBELET_DIR + "/plugins_registry/" + pool.driverName() + "-reg.sock";
    }

    /**
     * The node container's arguments. The host reserve and the overcommit ratio are passed only when
     * the pool sets them, so that a pool without them keeps its pod template (no rollout on upgrade).
     */
    static List<String> nodeArgs(StoragePool pool) {
        List<String> args = new java.util.ArrayList<>(List.of("node", "--endpoint", "unix://" + csiSocket(pool), "--driver-name",
                pool.driverName(), "--pool", pool.getMetadata().getName(), "--node-name", "$(NODE_NAME)", "--data-dir", pool.backingDir(),
                "--capacity", pool.getSpec().getCapacityPerNode()));
        if (pool.getSpec().getHostReserve() != null && !pool.getSpec().getHostReserve().isBlank()) {
            args.addAll(List.of("--host-reserve", pool.getSpec().getHostReserve()));
        }
        if (pool.getSpec().getThinOvercommit() != null) {
            args.addAll(List.of("--thin-overcommit", io.loopcsi.engine.CapacityPolicy.format(pool.getSpec().getThinOvercommit())));
        }
        args.addAll(List.of("--registration-socket", registrationSocket(pool), "--allowed-roots", KUBELET_DIR, "--http-address",
                ControllerDeployment.HTTP_ADDRESS));
        return args;
    }

    public static DaemonSet desired(StoragePool pool, String namespace) {
        String pull = Sidecars.pullPolicy(pool);
        SecurityContext privileged = new SecurityContextBuilder().withPrivileged(true).build();
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
                // no service links: the roles find nothing through them, and each Service in the namespace would
                // add 7 env vars that every start matches against every config property (issue 33: ~9 ms of
                // the native start's CPU per 28 vars, docs/performance.md)
                .withEnableServiceLinks(false)
                .withNodeSelector(selector == null || selector.isEmpty() ? null : new LinkedHashMap<>(selector))
                .withTolerations(pool.getSpec().getTolerations() == null || pool.getSpec().getTolerations().isEmpty() ? null
                        : pool.getSpec().getTolerations())
                // a node that cannot host the pool says why (kubectl describe pod: the doctor's verdict) instead of failing volumes later
                .addNewInitContainer().withName("doctor")
                .withImage(Sidecars.loopcsiImage(pool)).withImagePullPolicy(pull)
                .withArgs("doctor", "--data-dir", pool.backingDir(), "--capacity", pool.getSpec().getCapacityPerNode())
                .withTerminationMessagePolicy("FallbackToLogsOnError")
                .withVolumeMounts(mounts(pool))
                .withResources(ContainerResources.node(pool))
                .withSecurityContext(privileged)
                .endInitContainer()
                .addNewContainer().withName("loopcsi")
                .withImage(Sidecars.loopcsiImage(pool)).withImagePullPolicy(pull)
                .withArgs(nodeArgs(pool))
                .withEnv(env(pool, namespace))
                .addNewPort().withName("metrics").withContainerPort(Sidecars.METRICS_PORT).withProtocol("TCP").endPort()
                .addAllToPorts(NodeTransfer.ports(pool))
                .withLivenessProbe(Sidecars.probe("/q/health/live"))
                .withVolumeMounts(concat(mounts(pool), NodeTransfer.mounts(pool)))
                .withResources(ContainerResources.node(pool))
                .withSecurityContext(privileged)
                .endContainer()
                .withVolumes(concat(List.of(
                        hostPath("kubelet-dir", KUBELET_DIR, "Directory"),
                        hostPath("dev", "/dev", "Directory"),
                        hostPath("backing-dir", pool.backingDir(), "DirectoryOrCreate")), NodeTransfer.volumes(pool)))
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    /**
     * JAVA_OPTS of the node container when the pool runs the JVM (spec.runtime: jvm): full tiered
     * compilation, C2 included, instead of the image's {@code -XX:TieredStopAtLevel=1}
     * (src/main/docker/Dockerfile.jvm). Why: the node serves and fetches transfers (issue 35), whose
     * every byte is hashed (SHA-256) and encrypted (TLS, AES-GCM), and only C2 has the JDK's
     * SHA-256, AES and GHASH intrinsics; C1 alone transfers at ~7 MiB/s against ~150-250 MiB/s
     * with them (docs/performance.md, "10 transfer"). The price is C2's compilations at start (CPU,
     * not memory: the launcher bounds the code cache at 32 MiB and its budget of the regions
     * besides the heap was measured with C2, `loopcsi` jvm_memory_opts). The image's class-data
     * archive, recorded at C1 only, is mapped all the same: neither AppCDS (JDK 17) nor the AOT
     * cache (JDK 25) depends on the compiler's level (tried on OpenJDK 17.0.15 with -Xshare:on and
     * Temurin 25.0.3 with -XX:AOTMode=on, which refuse an archive they cannot map). The controller and doctor keep the image's C1:
     * they move no data. A pool's own image is set this way too, and must honour JAVA_OPTS as
     * ./loopcsi does.
     */
    static final String JVM_NODE_JAVA_OPTS = "-XX:TieredStopAtLevel=4";

    /**
     * The node container's environment: its node's name, its memory limit, the transfer's settings
     * (spec.transfer), and under the JVM its compilers ({@link #JVM_NODE_JAVA_OPTS}).
     */
    static List<EnvVar> env(StoragePool pool, String namespace) {
        List<EnvVar> env = concat(List.of(Sidecars.fieldEnv("NODE_NAME", "spec.nodeName"), Sidecars.memoryLimitEnv("loopcsi")),
                NodeTransfer.env(pool, namespace));
        if (pool.getSpec().getRuntime() == PoolRuntime.JVM) {
            env = concat(env, List.of(new EnvVar("JAVA_OPTS", JVM_NODE_JAVA_OPTS, null)));
        }
        return env;
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** The node container's mounts, which doctor checks too (kubelet's directory shared, the host's /dev, the pool). */
    private static List<VolumeMount> mounts(StoragePool pool) {
        return List.of(
                new VolumeMountBuilder().withName("kubelet-dir").withMountPath(KUBELET_DIR).withMountPropagation("Bidirectional").build(),
                new VolumeMountBuilder().withName("dev").withMountPath("/dev").build(),
                new VolumeMountBuilder().withName("backing-dir").withMountPath(pool.backingDir()).build());
    }

    private static Volume hostPath(String name, String path, String type) {
        return new VolumeBuilder().withName(name).withNewHostPath().withPath(path).withType(type).endHostPath().build();
    }
}
