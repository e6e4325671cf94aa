package io.loopcsi.node;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import org.jboss.logging.Logger;

import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.transfer.TransferGrant;

/**
 * The destination's side of a transfer's end when its volume's object is gone (issue 35): an admin
 * removed the finalizer of a LoopVolume whose fetch was cut or in progress (the node down or
 * restarting), so no DeleteVolume ran here, and the fetch's partial image ({@code volumes/<ID>.img.tmp},
 * kept at the start while its progress is) and progress ({@code transfers/<ID>.json}) would stay
 * forever. The disk audit lists them (DiskAudit, abandoned transfers); this deletes them, as a
 * {@link TransferSweeper.Held}, when nothing can go on with them any more.
 *
 * <p>Why they may be deleted at all: a partial image is not user data (the source still holds the
 * content; a fetch asked for again only sends it again). Why not at once: the volume ID is derived
 * from the CSI request name ({@code Ids.volumeIdFor}) and the transfer ID is that volume ID, so the
 * provisioner's retried CreateVolume makes a LoopVolume of the same name, and its fetch goes on from
 * this very checkpoint. So a fetch is kept while
 * <ul>
 * <li>a LoopVolume of this node names the volume (being made, queued, being deleted: its handler owns
 * the files), or this node's LoopVolumes are not listed yet (the first sweep runs before the informers
 * have synced: nothing is known then), or</li>
 * <li>a LoopTransfer authorises the transfer to this node, and its window has not passed more than
 * {@link #GRACE} ago: the controller writes the LoopTransfer before the intent and renews the window at
 * each retry, and deletes it when the volume is answered or deleted. A window long passed with no
 * LoopVolume means no CreateVolume has asked for the volume since (the claim was deleted, or the
 * provisioner stopped): the source would refuse the fetch anyway until a retry renews it, and that
 * retry then starts over.</li>
 * </ul>
 * A LoopTransfer naming another destination node (the retry placed the volume elsewhere) leaves this
 * node's partial image to nothing. The delete itself takes the volume's lock and skips a volume being
 * fetched or committed ({@link VolumeEngine#dropAbandonedFetch}), and an API error keeps everything
 * for the next round (TransferSweeper).
 */
final class AbandonedFetches {

    private static final Logger LOG = Logger.getLogger(AbandonedFetches.class);
    /** How long after its window a LoopTransfer with no LoopVolume still keeps a fetch: above csi-provisioner's longest retry pause (5 min). */
    static final Duration GRACE = Duration.ofMinutes(15);

    private final Path poolDir;
    private final String node;
    /** Whether a LoopVolume of this node names the volume ID. */
    private final Predicate<String> claimed;
    /** Whether this node's LoopVolumes are listed (the informer has synced). */
    private final BooleanSupplier listed;
    private final VolumeEngine engine;
    private final Clock clock;

    AbandonedFetches(Path poolDir, String node, Predicate<String> claimed, BooleanSupplier listed, VolumeEngine engine, Clock clock) {
        this.poolDir = poolDir;
        this.node = node;
        this.claimed = claimed;
        this.listed = listed;
        this.engine = engine;
        this.clock = clock;
    }

    TransferSweeper.Held held() {
        return new TransferSweeper.Held(this::unclaimed, this::release, this::over);
    }

    /** The volume IDs of fetches on disk that no LoopVolume of this node names; none before the LoopVolumes are listed. */
    Set<String> unclaimed() {
        Set<String> ids = new TreeSet<>();
        if (!listed.getAsBoolean()) {
            return ids;
        }
        try {
            for (PoolDirectory.PartialFetch f : PoolDirectory.partialFetches(poolDir)) {
                if (!claimed.test(f.volumeId())) {
                    ids.add(f.volumeId());
                }
            }
        } catch (IOException e) {
            LOG.warnf("cannot list the transfers' progress in %s: %s", poolDir, e.getMessage());
        }
        return ids;
    }

    /** Whether nothing can go on with the fetch, given the LoopTransfer of its ID (empty: none). */
    boolean over(Optional<TransferGrant> grant) {
        if (grant.isEmpty() || !node.equals(grant.get().destinationNode())) {
            return true;
        }
        return grant.get().notAfter().plus(GRACE).isBefore(clock.instant());
    }

    /** Deletes the fetch unless a LoopVolume has come for it meanwhile (the engine then skips one being fetched). */
    void release(String volumeId) {
        if (!claimed.test(volumeId)) {
            engine.dropAbandonedFetch(volumeId);
        }
    }
}
