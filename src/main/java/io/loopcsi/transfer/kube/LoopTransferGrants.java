package io.loopcsi.transfer.kube;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopTransferSpec;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.service.Grants;

/**
 * A transfer's authorisation as its LoopTransfer {@code <pool>.<transfer ID>} says, read from the
 * API server at each call (a deleted object ends the authorisation at once). An object of another
 * pool, or whose transfer ID is not its name's, authorises nothing.
 */
public final class LoopTransferGrants implements Grants {

    private final KubernetesClient client;
    private final String pool;

    public LoopTransferGrants(KubernetesClient client, String pool) {
        this.client = client;
        this.pool = pool;
    }

    @Override
    public Optional<TransferGrant> find(String transferId) {
        LoopTransfer t = client.resources(LoopTransfer.class).withName(HandoffNames.object(pool, transferId)).get();
        if (t == null || t.getSpec() == null) {
            return Optional.empty();
        }
        return Optional.of(of(t.getSpec(), pool, transferId));
    }

    /** The grant an object's spec makes; DENIED for one of another pool or transfer, or with an unreadable window. */
    static TransferGrant of(LoopTransferSpec s, String pool, String transferId) {
        if (!pool.equals(s.getPool()) || !transferId.equals(s.getTransferId())) {
            throw new TransferException(TransferException.Kind.DENIED, "LoopTransfer " + HandoffNames.object(pool, transferId) + " names pool "
                    + s.getPool() + " and transfer " + s.getTransferId());
        }
        try {
            return new TransferGrant(s.getTransferId(), s.getSource(), s.getSourceNode(), s.getDestinationNode(), Instant.parse(s.getNotBefore()),
                    Instant.parse(s.getNotAfter()));
        } catch (DateTimeParseException | NullPointerException e) {
            throw new TransferException(TransferException.Kind.DENIED, "LoopTransfer " + HandoffNames.object(pool, transferId)
                    + " has no readable window [" + s.getNotBefore() + ", " + s.getNotAfter() + ")");
        }
    }
}
