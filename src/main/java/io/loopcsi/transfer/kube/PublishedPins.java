package io.loopcsi.transfer.kube;

import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;

/**
 * The certificates the pool's nodes published (their LoopPoolNodes' status): whom the transfer
 * server lets complete a TLS handshake. Which node a caller is, is decided per call
 * ({@link TokenReviewIdentity}); this only keeps strangers from connecting at all.
 */
public final class PublishedPins implements Supplier<Set<String>> {

    private final KubernetesClient client;
    private final String pool;

    public PublishedPins(KubernetesClient client, String pool) {
        this.client = client;
        this.pool = pool;
    }

    @Override
    public Set<String> get() {
        return client.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, pool).list().getItems().stream()
                .filter(n -> n.getStatus() != null && n.getStatus().getTransferCertificateSha256() != null)
                .map(n -> n.getStatus().getTransferCertificateSha256()).collect(Collectors.toSet());
    }

    /** The certificate node {@code node} published, or null. */
    public String of(String node) {
        LoopPoolNode n = client.resources(LoopPoolNode.class).withName(HandoffNames.poolNode(pool, node)).get();
        return n == null || n.getStatus() == null ? null : n.getStatus().getTransferCertificateSha256();
    }
}
