package io.loopcsi.operator.desired;

import java.util.List;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.loopcsi.operator.api.Images;
import io.loopcsi.operator.api.PoolRuntime;
import io.loopcsi.operator.api.StoragePool;

/** Pieces shared by the controller Deployment and the node DaemonSet. */
final class Sidecars {

    /** Where every container of a pod finds the CSI socket. */
    static final String SOCKET_DIR = "/csi";
    static final String SOCKET = SOCKET_DIR + "/csi.sock";
    static final String SOCKET_VOLUME = "socket-dir";
    /** A writable /tmp for the JVM under a read-only root filesystem. */
    static final String TMP_VOLUME = "tmp";
    /** loopcsi's one TCP port in the controller and node roles: /q/health (its probes) and /q/metrics. */
    static final int METRICS_PORT = 9090;

    private Sidecars() {
    }

    static Images images(StoragePool pool) {
        Images i = pool.getSpec().getImages();
        return i == null ? new Images() : i;
    }

    static String pullPolicy(StoragePool pool) {
        Images.PullPolicy p = images(pool).getPullPolicy();
        return (p == null ? Images.PullPolicy.IfNotPresent : p).name();
    }

    /** The loopcsi image of the pool's spec.runtime: the native image unless the pool asks for the JVM. */
    static String loopcsiImage(StoragePool pool) {
        Images img = images(pool);
        return pool.getSpec().getRuntime() == PoolRuntime.JVM ? orDefault(img.getLoopcsi(), Images.LOOPCSI)
                : orDefault(img.getLoopcsiNative(), Images.LOOPCSI_NATIVE);
    }

    static String orDefault(String image, String fallback) {
        return image == null || image.isBlank() ? fallback : image;
    }

    static VolumeMount socketMount() {
        return new VolumeMountBuilder().withName(SOCKET_VOLUME).withMountPath(SOCKET_DIR).build();
    }

    /**
     * The loopcsi container's memory limit, in bytes, for the launcher (./loopcsi sizes the JVM's heap
     * from it, and reads the cgroup's where this is unset): the downward API's view of its own limit.
     */
    static EnvVar memoryLimitEnv(String container) {
        return new EnvVarBuilder().withName("LOOPCSI_MEMORY_LIMIT").withNewValueFrom().withNewResourceFieldRef().withContainerName(container)
                .withResource("limits.memory").endResourceFieldRef().endValueFrom().build();
    }

    /** Unprivileged container: nothing to escalate, no capabilities, read-only root. */
    static SecurityContext unprivileged() {
        return new SecurityContextBuilder().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                .withNewCapabilities().withDrop("ALL").endCapabilities().build();
    }

    static VolumeMount tmpMount() {
        return new VolumeMountBuilder().withName(TMP_VOLUME).withMountPath("/tmp").build();
    }

    /** A probe of loopcsi's own health endpoint (the role serves it with --http-address). */
    static io.fabric8.kubernetes.api.model.Probe probe(String path) {
        return new io.fabric8.kubernetes.api.model.ProbeBuilder().withNewHttpGet().withPath(path)
                .withPort(new io.fabric8.kubernetes.api.model.IntOrString("metrics")).endHttpGet()
                .withInitialDelaySeconds(10).withPeriodSeconds(20).withTimeoutSeconds(3).withFailureThreshold(5).build();
    }

    static EnvVar fieldEnv(String name, String fieldPath) {
        return new EnvVarBuilder().withName(name).withNewValueFrom().withNewFieldRef().withFieldPath(fieldPath).endFieldRef().endValueFrom().build();
    }

    static List<String> leaderElection() {
        return List.of("--leader-election", "--leader-election-namespace=$(NAMESPACE)");
    }
}
