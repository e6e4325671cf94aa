package io.loopcsi.node;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.service.Grants;

/**
 * The source's side of a transfer's end: what this node holds for a transfer (the point-in-time
 * copy of a volume it read, {@code VolumeEngine#transferCopy}, and its plan) goes once no
 * LoopTransfer authorises the transfer any more (the controller deletes it when the volume is
 * answered or deleted). A window that has passed is not the end: the controller's retried
 * CreateVolume renews it, and the destination resumes against the same copy. Run at the node's
 * start and then every minute, so a source node that was down when the transfer ended finds its
 * copies at its next start.
 *
 * <p>An error reading the authorisation (the API server unreachable) keeps everything for the
 * next round: something is released only when its transfer is known to be over.
 */
final class TransferSweeper implements Runnable {

    private static final Logger LOG = Logger.getLogger(TransferSweeper.class);

    /**
     * Something held per transfer ID, how to release one, and when its transfer is over given its
     * authorisation (empty: no LoopTransfer, or one that authorises nothing).
     */
    record Held(Supplier<Set<String>> ids, Consumer<String> release, Predicate<Optional<TransferGrant>> over) {

        /** Held while any LoopTransfer names the transfer (the source's side). */
        Held(Supplier<Set<String>> ids, Consumer<String> release) {
            this(ids, release, Optional::isEmpty);
        }
    }

    private final Grants grants;
    private final List<Held> held;

    TransferSweeper(Grants grants, List<Held> held) {
        this.grants = grants;
        this.held = held;
    }

    @Override
    public void run() {
        try {
            sweep();
        } catch (RuntimeException e) {
            LOG.warnf("ended transfers not swept this round: %s", e.getMessage());
        }
    }

    /** The transfers whose holdings it released. */
    Set<String> sweep() {
        Set<String> ended = new TreeSet<>();
        Map<String, Optional<TransferGrant>> grant = new HashMap<>(); // one look at the API per transfer and round
        for (Held h : held) {
            for (String id : h.ids().get()) {
                if (h.over().test(grant.computeIfAbsent(id, this::grant))) {
                    h.release().accept(id);
                    ended.add(id);
                }
            }
        }
        return ended;
    }

    private Optional<TransferGrant> grant(String transferId) {
        try {
            return grants.find(transferId);
        } catch (TransferException e) {
            return Optional.empty(); // an object that authorises nothing (another pool's, another transfer's)
        }
    }
}
