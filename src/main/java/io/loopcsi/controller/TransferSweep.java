package io.loopcsi.controller;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The controller's periodic deletion of the pool's LoopTransfers that are over
 * ({@link TransferEnd}): those a call never got to release (the controller stopped while it
 * waited, or an admin removed the destination's LoopVolume by its finalizer, and the claim with
 * it, so no call comes again). Without it such a transfer would stay until its source is deleted,
 * and the source node would keep its copy of the source for it (node.TransferSweeper).
 *
 * <p>Started once the pool's informers have their first list (ApiVolumeProvider.start). A
 * destination that cannot be read keeps its transfer; an API server that cannot be reached keeps
 * all of them: the next round tries again.
 */
final class TransferSweep implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(TransferSweep.class);

    private final TransferIntents transfers;
    private ScheduledExecutorService timer;

    TransferSweep(TransferIntents transfers) {
        this.transfers = transfers;
    }

    /** Sweeps now and then every period. */
    TransferSweep start(Duration every) {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "loopcsi-controller-transfer-sweep");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::sweep, 0, Math.max(1, every.toMillis()), TimeUnit.MILLISECONDS);
        return this;
    }

    /** One round; never throws (a failure must not end the schedule). */
    void sweep() {
        try {
            transfers.endOver(s -> true, this::destination);
        } catch (RuntimeException e) {
            LOG.warnf("transfers that are over not swept this round: %s", e.getMessage());
        }
    }

    private TransferEnd.Destination destination(String volumeId) {
        try {
            return transfers.destination(volumeId);
        } catch (KubernetesClientException e) {
            LOG.debugf("volume %s not read: its transfer is kept this round: %s", volumeId, e.getMessage());
            return TransferEnd.Destination.UNKNOWN;
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
