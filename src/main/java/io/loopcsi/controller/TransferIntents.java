package io.loopcsi.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.engine.EngineException;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopTransferSpec;
import io.loopcsi.handoff.LoopVolume;

/**
 * The controller's part of a cross-node restore or clone (docs/architecture.md, "Transfer"): the
 * LoopTransfer {@code <pool>.<transfer ID>} that authorises the destination node to read the source
 * from the source node, written before the intent; deleted when the volume is answered or deleted.
 * The transfer ID is the destination volume's ID, so a retried CreateVolume finds the same object.
 * While an object names a source, the source's deletion is refused ({@link #holder}). One that a
 * stopped call or an admin's removal of the volume left behind is deleted once it is over
 * ({@link TransferEnd}): when the source is deleted, and by {@link TransferSweep} every minute.
 */
final class TransferIntents {

    private static final Logger LOG = Logger.getLogger(TransferIntents.class);
    /** The slowest rate a window allows for (no bandwidth cap yet): 10 MiB/s. */
    static final long FLOOR_BYTES_PER_SECOND = 10L << 20;
    static final Duration MAX_WINDOW = Duration.ofHours(24);
    /** Clocks of the nodes may be behind the controller's. */
    static final Duration SKEW = Duration.ofMinutes(1);

    private final PoolInformers informers;
    private final PoolNodes nodes;
    private final KubernetesClient client;
    private final Duration answerTimeout;
    private final Clock clock;
    private final String pool;

    TransferIntents(PoolInformers informers, PoolNodes nodes, KubernetesClient client, Duration answerTimeout, Clock clock) {
        this.informers = informers;
        this.nodes = nodes;
        this.client = client;
        this.answerTimeout = answerTimeout;
        this.clock = clock;
        this.pool = informers.pool();
    }

    /** Why a transfer from one node to the other cannot be made now, or null when both serve with a published transfer endpoint. */
    String whyNot(String from, String to) {
        for (String n : new String[] { from, to }) {
            LoopPoolNode p = nodes.serving(n);
            if (p == null) {
                return "node " + n + " is not serving pool " + pool + " (" + nodes.heartbeatOf(n) + ")";
            }
            if (p.getStatus().getTransferCertificateSha256() == null || p.getStatus().getTransferAddress() == null) {
                return "node " + n + " has no transfer endpoint (its LoopPoolNode publishes no transferAddress and certificate)";
            }
        }
        return null;
    }

    /** The window: now (less the skew) to now + the answer timeout + the size at the floor rate, at most 24 h. */
    static LoopTransferSpec spec(String pool, String transferId, String source, String from, String to, long sizeBytes,
            Integer logicalBlockSize, Instant now, Duration answerTimeout) {
        Duration need = answerTimeout.plusSeconds(Math.max(0, sizeBytes) / FLOOR_BYTES_PER_SECOND).plus(SKEW);
        LoopTransferSpec s = new LoopTransferSpec();
        s.setPool(pool);
        s.setTransferId(transferId);
        s.setSource(source);
        s.setSourceNode(from);
        s.setDestinationNode(to);
        s.setDestinationVolumeId(transferId);
        s.setSizeBytes(sizeBytes);
        s.setLogicalBlockSize(logicalBlockSize);
        s.setNotBefore(now.minus(SKEW).toString());
        s.setNotAfter(now.plus(need.compareTo(MAX_WINDOW) > 0 ? MAX_WINDOW : need).toString());
        return s;
    }

    /** Writes (or renews) the authorisation of the transfer for volume ID; idempotent. */
    void authorise(String volumeId, String source, String from, String to, long sizeBytes, Integer logicalBlockSize) {
        String name = HandoffNames.object(pool, volumeId);
        LoopTransferSpec wanted = spec(pool, volumeId, source, from, to, sizeBytes, logicalBlockSize, clock.instant(), answerTimeout);
        LoopTransfer t = new LoopTransfer(name, wanted);
        t.getMetadata().setLabels(HandoffNames.labels(pool, from));
        for (int round = 0; round < 3; round++) {
            try {
                client.resource(t).create();
                LOG.infof("transfer %s authorised: %s from node %s to node %s until %s", name, source, from, to, wanted.getNotAfter());
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
            try {
                client.resources(LoopTransfer.class).withName(name).edit(o -> {
                    o.setSpec(wanted); // a retry renews the window (and takes the request's nodes)
                    return o;
                });
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404) {
                    throw e; // 404: a concurrent call's answer deleted it meanwhile: make it again
                }
            }
        }
        throw io.grpc.Status.ABORTED.withDescription("transfer " + name + " keeps changing under concurrent calls; try again").asRuntimeException();
    }

    /** Deletes the transfer of volume ID, if any (the volume is answered or deleted). */
    void release(String volumeId) {
        String name = HandoffNames.object(pool, volumeId);
        try {
            if (!client.resources(LoopTransfer.class).withName(name).delete().isEmpty()) {
                LOG.infof("transfer %s ended", name);
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }

    /**
     * A transfer that reads the source (a volume or snapshot ID), or empty. A transfer that is over
     * ({@link TransferEnd}) holds nothing: it is deleted here (the controller that should have
     * deleted it stopped before). One whose destination volume is not there yet but whose window
     * is live holds the source: its CreateVolume may be about to write the intent.
     */
    Optional<LoopTransfer> holder(String sourceId) {
        List<LoopTransfer> held = endOver(s -> Objects.equals(sourceId, s.getSource()), this::destination);
        return held.stream().findFirst();
    }

    /**
     * Deletes the pool's transfers that pass which and are over, each logged with why; the ones
     * left. A read of a destination that fails fails the call, unless destination says UNKNOWN.
     */
    List<LoopTransfer> endOver(Predicate<LoopTransferSpec> which, Function<String, TransferEnd.Destination> destination) {
        List<LoopTransfer> left = new ArrayList<>();
        for (LoopTransfer t : client.resources(LoopTransfer.class).withLabel(HandoffNames.POOL_LABEL, pool).list().getItems()) {
            if (t.getSpec() == null || !which.test(t.getSpec())) {
                continue;
            }
            String dest = t.getSpec().getDestinationVolumeId() != null ? t.getSpec().getDestinationVolumeId()
                    : HandoffNames.idOf(pool, t.getMetadata().getName());
            Optional<String> why = TransferEnd.over(t.getSpec(), dest == null ? TransferEnd.Destination.UNKNOWN : destination.apply(dest),
                    clock.instant());
            if (why.isEmpty() || !end(t, why.get())) {
                left.add(t);
            }
        }
        return left;
    }

    /** The destination volume's LoopVolume as the API server has it now. */
    TransferEnd.Destination destination(String volumeId) {
        return TransferEnd.Destination.of(informers.get(LoopVolume.class, HandoffNames.object(pool, volumeId)));
    }

    /**
     * Deletes the transfer as it was read: false when it changed meanwhile (a retried CreateVolume
     * renewed it: it is not over any more).
     */
    private boolean end(LoopTransfer t, String why) {
        try {
            client.resource(t).lockResourceVersion().delete();
            LOG.infof("transfer %s ended: %s (source %s on node %s)", t.getMetadata().getName(), why, t.getSpec().getSource(),
                    t.getSpec().getSourceNode());
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return true;
            }
            if (e.getCode() == 409) {
                return false;
            }
            throw e;
        }
    }

    /** FAILED_PRECONDITION while a transfer reads the source. */
    void checkNotHeld(String sourceId, String what) {
        holder(sourceId).ifPresent(t -> {
            throw EngineException.precondition(what + " is being read by transfer " + t.getMetadata().getName() + " (to volume "
                    + t.getSpec().getDestinationVolumeId() + " on node " + t.getSpec().getDestinationNode()
                    + "); it can be deleted when that volume is made or given up, or after " + t.getSpec().getNotAfter()
                    + " if that volume is gone");
        });
    }
}
