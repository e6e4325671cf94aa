package io.loopcsi.operator.desired;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.loopcsi.operator.api.PoolTransfer;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.transfer.kube.TokenReviewIdentity;

/**
 * The transfer's part of the node pod (spec.transfer; docs/architecture.md, "Transfer"): the
 * transfer server on a named container port of the pod's own IP (the node pods are not on the
 * host network, so the port is the same on every node and is not a spec field), the pod IP as the
 * address peers are told (downward API status.podIP), the namespace and ServiceAccount whose pods'
 * tokens the server accepts, and the pod-bound token it sends when it fetches: a projected
 * serviceAccountToken of audience {@link TokenReviewIdentity#AUDIENCE}, which kubelet rotates and
 * the node reads anew for every call. The node role's settings are its config (io.loopcsi.node.NodeRoleConfig)
 * set through the environment.
 */
public final class NodeTransfer {

    public static final String REASON = "InvalidTransfer";
    public static final String PORT_NAME = "transfer";
    public static final int PORT = 9810;
    public static final String TOKEN_VOLUME = "transfer-token";
    public static final String TOKEN_DIR = "/var/run/secrets/loopcsi.io/transfer";
    public static final String TOKEN_FILE = TOKEN_DIR + "/token";
    /**
     * The shortest lifetime the API server accepts for a projected token (10 minutes: kubernetes
     * pkg/apis/core/validation, ValidateProjectedVolumeSource / "must be at least 10 minutes"):
     * kubelet renews it at 80%, and the node reads it for every call, so a leaked one is soon useless.
     */
    public static final long TOKEN_SECONDS = 600;
    /** The least bandwidth cap: one default chunk (1 MiB, TransferPlan.DEFAULT_CHUNK) per second. */
    static final long MIN_BANDWIDTH = 1L << 20;

    private NodeTransfer() {
    }

    public static boolean enabled(StoragePool pool) {
        return settings(pool).isEnabled();
    }

    /** The node container's environment for the transfer (before it: NODE_NAME, which the others do not use). */
    static List<EnvVar> env(StoragePool pool, String namespace) {
        if (!enabled(pool)) {
            return List.of();
        }
        List<EnvVar> env = new ArrayList<>(List.of(
                Sidecars.fieldEnv("POD_IP", "status.podIP"),
                value("LOOPCSI_NODE_TRANSFER_ADDRESS", "0.0.0.0:" + PORT),
                // $(POD_IP): kubelet expands a variable defined earlier in the list
                value("LOOPCSI_NODE_TRANSFER_ADVERTISE_ADDRESS", "$(POD_IP):" + PORT),
                value("LOOPCSI_NODE_TRANSFER_NAMESPACE", namespace),
                value("LOOPCSI_NODE_TRANSFER_NODE_ACCOUNT", PoolNames.node(pool)),
                value("LOOPCSI_NODE_TRANSFER_TOKEN_FILE", TOKEN_FILE),
                value("LOOPCSI_NODE_TRANSFER_CONCURRENCY", Integer.toString(settings(pool).getMaxConcurrentPerNode()))));
        bandwidth(pool).ifPresent(b -> env.add(value("LOOPCSI_NODE_TRANSFER_BANDWIDTH", Long.toString(b))));
        return env;
    }

    static List<ContainerPort> ports(StoragePool pool) {
        return enabled(pool) ? List.of(new ContainerPortBuilder().withName(PORT_NAME).withContainerPort(PORT).withProtocol("TCP").build())
                : List.of();
    }

    static List<Volume> volumes(StoragePool pool) {
        return enabled(pool) ? List.of(new VolumeBuilder().withName(TOKEN_VOLUME).withNewProjected().addNewSource()
                .withNewServiceAccountToken().withAudience(TokenReviewIdentity.AUDIENCE).withExpirationSeconds(TOKEN_SECONDS).withPath("token")
                .endServiceAccountToken().endSource().endProjected().build()) : List.of();
    }

    static List<VolumeMount> mounts(StoragePool pool) {
        return enabled(pool) ? List.of(new VolumeMountBuilder().withName(TOKEN_VOLUME).withMountPath(TOKEN_DIR).withReadOnly(true).build())
                : List.of();
    }

    /** The cap in bytes per second, when spec.transfer.bandwidthPerNode sets one (and {@link #problem} finds none). */
    static Optional<Long> bandwidth(StoragePool pool) {
        String b = settings(pool).getBandwidthPerNode();
        return b == null || b.isBlank() ? Optional.empty() : Optional.of(bytes(b).longValue());
    }

    /**
     * What is wrong with spec.transfer, naming the field, or empty: what the schema cannot say (a
     * quantity that does not parse, a cap below {@link #MIN_BANDWIDTH}), and the concurrency's range
     * again for a spec read from an older schema.
     */
    public static Optional<String> problem(StoragePool pool) {
        PoolTransfer t = settings(pool);
        List<String> problems = new ArrayList<>();
        String b = t.getBandwidthPerNode();
        if (b != null && !b.isBlank()) {
            BigDecimal bytes;
            try {
                bytes = bytes(b);
            } catch (RuntimeException e) {
                bytes = null;
                problems.add("spec.transfer.bandwidthPerNode: not a quantity: '" + b + "' (use e.g. 100Mi, bytes per second)");
            }
            if (bytes != null && bytes.compareTo(BigDecimal.valueOf(MIN_BANDWIDTH)) < 0) {
                problems.add("spec.transfer.bandwidthPerNode (" + b + ") is below 1Mi per second; set at least 1Mi, or leave it unset for"
                        + " no cap");
            }
        }
        if (t.getMaxConcurrentPerNode() < 1 || t.getMaxConcurrentPerNode() > 16) {
            problems.add("spec.transfer.maxConcurrentPerNode (" + t.getMaxConcurrentPerNode() + ") is not between 1 and 16");
        }
        return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
    }

    private static BigDecimal bytes(String quantity) {
        return Quantity.getAmountInBytes(new Quantity(quantity));
    }

    private static PoolTransfer settings(StoragePool pool) {
        PoolTransfer t = pool.getSpec().getTransfer();
        return t == null ? new PoolTransfer() : t;
    }

    private static EnvVar value(String name, String value) {
        return new io.fabric8.kubernetes.api.model.EnvVarBuilder().withName(name).withValue(value).build();
    }
}
