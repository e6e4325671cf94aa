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
 *
 * <p>The list is kept for {@link #FRESH}: the check runs in the TLS handshake, on the server's
 * Netty event loop, which must not wait for the API server at every connection. A restarted peer
 * publishes its new certificate before it calls anyone, so a second is not seen.
 */
public final class PublishedPins implements Supplier<Set<String>> {

    static final long FRESH = 1_000_000_000L; // ns
    private final KubernetesClient client;
    private final String pool;
    private volatile Set<String> listed = Set.of();
    private volatile long listedAt = System.nanoTime() - 2 * FRESH;

    public PublishedPins(KubernetesClient client, String pool) {
        this.client = client;
        this.pool = pool;
    }

    @Override
    public Set<String> get() {
        long now = System.nanoTime();
        if (now - listedAt > FRESH) {
            listed = list();
            listedAt = now;
        }
        return listed;
    }

    private Set<String> list() {
        return client.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, pool).list().getItems().stream()
                .filter(n -> n.getStatus() != null && n.getStatus().getTransferCertificateSha256() != null)
                .map(n -> n.getStatus().getTransferCertificateSha256()).collect(Collectors.toSet());
    }
}
