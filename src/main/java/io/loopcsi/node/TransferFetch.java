package io.loopcsi.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.loopcsi.engine.Ids;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.TransferProgress;
import io.loopcsi.transfer.FetchProgress;
import io.loopcsi.transfer.FetchSlots;
import io.loopcsi.transfer.TransferObserver;
import io.loopcsi.transfer.TransferPlan;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferState;
import io.loopcsi.transfer.service.BearerToken;
import io.loopcsi.transfer.service.TransferClient;
import io.loopcsi.transfer.tls.NodeKeys;

/**
 * The destination's side of a cross-node restore or clone (docs/architecture.md, "Transfer"): the
 * source node's address and certificate from its LoopPoolNode, the size from the LoopTransfer the
 * controller wrote, then {@link TransferClient} into the new volume's temporary image. A cut
 * (UNAVAILABLE, or CANCELLED by the source: it stops, e.g. for its restart) is tried again from the
 * last checkpoint after a pause of 1 s doubling to {@link #CUT_PAUSE}, for up to {@link #CUT_WAIT} (the source's restart
 * and the publication of its new certificate); a busy
 * source (RESOURCE_EXHAUSTED: it serves its most transfers at once) is asked again after a pause,
 * for up to {@link #BUSY_WAIT}; every
 * failure is an {@link EngineException} naming the source node and the reason, after which the
 * engine deletes the image and the progress here is forgotten (the controller's retry starts over).
 *
 * <p>This node runs at most as many fetches at once as it serves ({@link FetchSlots}, the node's
 * transfer-concurrency): a restore past them waits in a bounded queue, first come first served,
 * shown as status.transfer phase Queued with its place; it holds no work thread meanwhile (the
 * handler is asked again each second, {@link #inSlot}). Past {@link #MAX_QUEUED} waiting, the
 * volume fails with RESOURCE_EXHAUSTED (the controller's retry asks again).
 */
final class TransferFetch {

    private static final Logger LOG = Logger.getLogger(TransferFetch.class);
    /**
     * How long a destination keeps asking a source that cut the transfer (UNAVAILABLE: unreachable,
     * its certificate not the published one; CANCELLED: it stopped), pausing 1 s doubling to 30 s:
     * enough for a node pod's restart (a JVM's start, then its new certificate published), short
     * enough that a source gone for good fails the volume within minutes.
     */
    static final Duration CUT_WAIT = Duration.ofMinutes(2);
    /**
     * The longest pause between the questions to a source that cut the transfer: a restarted source
     * is back in seconds, and asking it costs a connection attempt, so the fetch goes on within
     * this much of its return.
     */
    static final Duration CUT_PAUSE = Duration.ofSeconds(8);
    /**
     * How long a destination keeps asking a source that serves its most transfers at once
     * (RESOURCE_EXHAUSTED) before the volume fails with it: long enough for a few transfers of
     * GiB ahead of it to end, short enough that a stuck source is seen. The wait holds one of the
     * node's work threads, as the fetch itself does.
     */
    static final Duration BUSY_WAIT = Duration.ofMinutes(10);
    /** status.transfer is written at most this often, or every {@link #WRITE_STEP} of the data (API server load). */
    static final Duration WRITE_EVERY = Duration.ofSeconds(2);
    static final double WRITE_STEP = 0.05;
    /** Fetches that may wait for a slot on one node: past them, the work is refused rather than held (a bounded queue). */
    static final int MAX_QUEUED = 64;
    /** A waiting fetch not asked for again for this long (its volume deleted) leaves the queue. */
    static final Duration FORGET_WAITING = Duration.ofSeconds(30);

    /** Pauses of 1 s doubling up to a longest one (30 s unless said), and the sum of those taken. */
    static final class Backoff {
        private final long longest;
        private long pause = TimeUnit.SECONDS.toNanos(1);
        private long waited;

        Backoff() {
            this(Duration.ofSeconds(30));
        }

        Backoff(Duration longest) {
            this.longest = longest.toNanos();
        }

        long next() {
            long p = pause;
            waited += p;
            pause = Math.min(pause * 2, longest);
            return p;
        }

        long waited() {
            return waited;
        }
    }

    private static void sleep(long nanos, String transferId) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw stopping(transferId);
        }
    }

    /**
     * This node stops (its work threads are interrupted): the fetch is not failed, its progress and
     * the temporary image are kept (ABORTED: VolumeEngine.createVolumeFrom keeps the image, the
     * handler writes no failure), and the node goes on from the checkpoint when it is back.
     */
    static EngineException stopping(String transferId) {
        return new EngineException(EngineException.Kind.ABORTED, "transfer " + transferId
                + " stopped as this node stops; it goes on from its last checkpoint when the node is back");
    }

    /** Whether the source cut the transfer, so that asking again may go on: it is unreachable or it stopped. */
    static boolean cut(Status.Code code) {
        return code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED;
    }

    private final KubernetesClient client;
    private final String pool;
    private final VolumeEngine engine;
    private final NodeKeys keys;
    private final Path tokenFile;
    private final AllocatedRanges ranges;
    private final Path dataDir;
    private final TransferObserver observer;
    /** The end of each fetch, by transfer ID, until the volume's answer takes it (VolumeHandler). */
    private final Map<String, TransferProgress> ends = new ConcurrentHashMap<>();
    private final FetchSlots slots;
    /** What status.transfer last said of each queued fetch: written again only when its place changes. */
    private final Map<String, String> queuedSaid = new ConcurrentHashMap<>();

    TransferFetch(KubernetesClient client, String pool, VolumeEngine engine, NodeKeys keys, Path tokenFile, AllocatedRanges ranges,
            Path dataDir, TransferObserver observer, int concurrent) {
        this.slots = new FetchSlots(concurrent, MAX_QUEUED, FORGET_WAITING.toNanos(), System::nanoTime);
        this.observer = observer;
        this.engine = engine;
        this.client = client;
        this.pool = pool;
        this.keys = keys;
        this.tokenFile = tokenFile;
        this.ranges = ranges;
        this.dataDir = dataDir;
    }

    /** The local engine, which makes the volume around the fetch. */
    VolumeEngine engine() {
        return engine;
    }

    /**
     * What the engine needs of the source: the LoopTransfer's size, sector size (0 when the
     * controller had none: the engine derives it from the content) and the source node; mode and
     * fsType are checked by the controller.
     */
    VolumeEngine.RemoteSource source(LoopVolumeSpec spec) {
        LoopTransfer t = client.resources(LoopTransfer.class).withName(HandoffNames.object(pool, spec.getTransferId())).get();
        if (t == null || t.getSpec() == null || t.getSpec().getSizeBytes() == null) {
            throw EngineException.precondition("transfer " + spec.getTransferId() + " from node " + spec.getSourceNode()
                    + " has no LoopTransfer (the controller writes it before the intent; it goes when the volume is answered)");
        }
        Integer sectors = t.getSpec().getLogicalBlockSize();
        return new VolumeEngine.RemoteSource(spec.getSourceNode(), null, null, t.getSpec().getSizeBytes(), sectors == null ? 0 : sectors);
    }

    /**
     * Runs work (the making of the volume around its fetch) in one of this node's fetch slots; when
     * none is free, writes the queue place into status.transfer (phase Queued) and throws ABORTED,
     * after which the handler asks again in a second without writing a failure. FULL past
     * {@link #MAX_QUEUED} waiting: RESOURCE_EXHAUSTED.
     */
    <T> T inSlot(LoopVolumeSpec spec, java.util.function.Supplier<T> work) {
        String id = spec.getTransferId();
        FetchSlots.Ticket t = slots.admit(id);
        if (t.admission() != FetchSlots.Admission.RUN) {
            String volume = HandoffNames.object(pool, Ids.volumeIdFor(spec.getName()));
            if (t.admission() == FetchSlots.Admission.FULL) {
                throw EngineException.exhausted("transfer " + id + " from node " + spec.getSourceNode() + " cannot start: " + t.describe());
            }
            if (!t.describe().equals(queuedSaid.put(id, t.describe()))) {
                LOG.infof("transfer %s from node %s: %s", id, spec.getSourceNode(), t.describe());
                TransferProgress p = new TransferProgress();
                p.setPhase(TransferProgress.QUEUED);
                p.setSourceNode(spec.getSourceNode());
                p.setReason(t.describe());
                p.setUpdatedAt(Clock.systemUTC().instant().toString());
                writeProgress(volume, p);
            }
            throw new EngineException(EngineException.Kind.ABORTED, "transfer " + id + " waits for a fetch slot: " + t.describe());
        }
        queuedSaid.remove(id);
        try {
            return work.get();
        } finally {
            slots.release(id);
        }
    }

    /** Fetches the source's content into image (made here, sourceBytes long). */
    void fetch(LoopVolumeSpec spec, Path image, long sourceBytes) {
        FetchProgress progress = new FetchProgress(spec.getSourceNode(), Clock.systemUTC(), System::nanoTime, WRITE_EVERY.toNanos(), WRITE_STEP);
        String volume = HandoffNames.object(pool, Ids.volumeIdFor(spec.getName()));
        long start = System.nanoTime();
        observer.started(TransferObserver.Direction.RECEIVE);
        ends.remove(spec.getTransferId());
        writeProgress(volume, progress.status(TransferProgress.TRANSFERRING, null));
        try {
            fetch(spec, image, sourceBytes, volume, progress, start);
            ends.put(spec.getTransferId(), progress.status(TransferProgress.DONE, null));
        } catch (EngineException e) {
            if (e.kind() != EngineException.Kind.ABORTED) {
                failed(spec, progress, e);
            } else {
                LOG.info(e.getMessage()); // the node stops: what the restart goes on from was recorded on the way out
            }
            throw e;
        } catch (RuntimeException e) {
            failed(spec, progress, e);
            throw e;
        } finally {
            observer.ended(TransferObserver.Direction.RECEIVE);
            observer.fetched(System.nanoTime() - start);
        }
    }

    private void failed(LoopVolumeSpec spec, FetchProgress progress, RuntimeException e) {
        String reason = reason(e);
        observer.failed(reason);
        ends.put(spec.getTransferId(), progress.status(TransferProgress.FAILED, reason + ": " + e.getMessage()));
    }

    /**
     * The end of transfer's last fetch on this node (Done or Failed, bytes, rate), for the volume's
     * answer, which the controller reads for the claim's Events; empty once taken or when none ran.
     */
    Optional<TransferProgress> end(String transferId) {
        return transferId == null ? Optional.empty() : Optional.ofNullable(ends.remove(transferId));
    }

    /** A metric label for a failed fetch: the gRPC code or the refusal's kind, lower case. */
    static String reason(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TransferException te) {
                return te.kind().name().toLowerCase(Locale.ROOT);
            }
            if (t instanceof StatusRuntimeException se) {
                return se.getStatus().getCode().name().toLowerCase(Locale.ROOT);
            }
        }
        return e instanceof EngineException ee ? ee.kind().name().toLowerCase(Locale.ROOT) : "internal";
    }

    /** A merge patch of status.transfer only: the rest of the status is the handler's. A write refused is logged, never fatal. */
    private void writeProgress(String volume, TransferProgress p) {
        try {
            String json = "{\"status\":{\"transfer\":" + Serialization.asJson(p) + "}}";
            client.resources(LoopVolume.class).withName(volume).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), json);
        } catch (RuntimeException e) {
            LOG.debugf("volume %s: cannot write the transfer's progress: %s", volume, e.getMessage());
        }
    }

    /** start: System.nanoTime() when this fetch began, its first attempt included, for the log line that ends it. */
    private void fetch(LoopVolumeSpec spec, Path image, long sourceBytes, String volume, FetchProgress progress, long start) {
        TransferClient.Progress written = new TransferClient.Progress() {
            @Override
            public void chunk(long index, long bytes) {
                observer.bytes(TransferObserver.Direction.RECEIVE, bytes);
                if (progress.chunk(index)) {
                    writeProgress(volume, progress.status(TransferProgress.TRANSFERRING, null));
                }
            }

            @Override
            public void planned(TransferPlan plan, long fromChunk) {
                progress.planned(plan, fromChunk);
            }
        };
        String source = spec.getSourceSnapshotId() != null ? spec.getSourceSnapshotId() : spec.getSourceVolumeId();
        String from = spec.getSourceNode();
        Backoff busy = new Backoff();
        Backoff cuts = new Backoff(CUT_PAUSE);
        try {
            while (true) {
                if (Thread.currentThread().isInterrupted()) {
                    throw stopping(spec.getTransferId());
                }
                LoopPoolNode n = client.resources(LoopPoolNode.class).withName(HandoffNames.poolNode(pool, from)).get();
                String address = n == null || n.getStatus() == null ? null : n.getStatus().getTransferAddress();
                String pin = n == null || n.getStatus() == null ? null : n.getStatus().getTransferCertificateSha256();
                if (address == null || pin == null || address.lastIndexOf(':') < 0) {
                    throw EngineException.precondition("node " + from + " has no transfer endpoint (its LoopPoolNode publishes no "
                            + "transferAddress and certificate)");
                }
                int colon = address.lastIndexOf(':');
                try (TransferClient c = new TransferClient(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)), pin,
                        keys, new BearerToken(this::token))) {
                    TransferClient.Result r = c.fetch(spec.getTransferId(), source, 0, dataDir, image, sourceBytes, ranges::of, written);
                    double seconds = (System.nanoTime() - start) / 1e9;
                    LOG.info(String.format(Locale.ROOT, "transfer %s: %s from node %s fetched in %.1f s (%d bytes of data from chunk %d on, "
                            + "%.0f MiB/s), digest %s", spec.getTransferId(), source, from, seconds, r.bytesReceived(), r.fromChunk(),
                            r.bytesReceived() / (1024.0 * 1024) / Math.max(seconds, 1e-3), r.digest()));
                    return;
                } catch (StatusRuntimeException e) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw stopping(spec.getTransferId()); // this node's own cancel of the call, not the source's
                    }
                    if (e.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED && busy.waited() < BUSY_WAIT.toNanos()) {
                        long pause = busy.next();
                        LOG.infof("transfer %s: node %s is busy (%s); trying again in %d s", spec.getTransferId(), from,
                                e.getStatus().getDescription(), TimeUnit.NANOSECONDS.toSeconds(pause));
                        sleep(pause, spec.getTransferId());
                        continue;
                    }
                    if (!cut(e.getStatus().getCode()) || cuts.waited() >= CUT_WAIT.toNanos()) {
                        throw engineError(e.getStatus().getCode(), from, e.getStatus().getDescription());
                    }
                    long pause = cuts.next();
                    LOG.infof("transfer %s: node %s cut the transfer (%s); going on from the last checkpoint in %d s", spec.getTransferId(),
                            from, e.getStatus(), TimeUnit.NANOSECONDS.toSeconds(pause));
                    sleep(pause, spec.getTransferId());
                }
            }
        } catch (TransferException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw stopping(spec.getTransferId()); // e.g. a write refused on the interrupted thread: the progress stays
            }
            forget(spec.getTransferId());
            throw new EngineException(e.kind() == TransferException.Kind.DENIED ? EngineException.Kind.FAILED_PRECONDITION
                    : EngineException.Kind.INTERNAL, "transfer " + spec.getTransferId() + " from node " + from + ": " + e.getMessage(), e);
        } catch (EngineException e) {
            if (e.kind() != EngineException.Kind.ABORTED) {
                forget(spec.getTransferId());
            }
            throw e;
        } catch (RuntimeException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw stopping(spec.getTransferId());
            }
            forget(spec.getTransferId());
            throw e;
        }
    }

    private void forget(String transferId) {
        try {
            TransferState.forget(dataDir, transferId);
        } catch (RuntimeException e) {
            LOG.warnf("transfer %s: cannot forget its progress: %s", transferId, e.getMessage());
        }
    }

    private static EngineException engineError(Status.Code code, String from, String description) {
        String message = "the transfer from node " + from + " failed: " + code + " " + description;
        return switch (code) {
            case NOT_FOUND -> EngineException.notFound(message);
            case PERMISSION_DENIED, FAILED_PRECONDITION -> EngineException.precondition(message);
            case INVALID_ARGUMENT -> EngineException.invalid(message);
            case RESOURCE_EXHAUSTED -> EngineException.exhausted(message);
            default -> new EngineException(EngineException.Kind.INTERNAL, message);
        };
    }

    private String token() {
        if (tokenFile == null) {
            throw new IllegalStateException("no transfer token file is configured (loopcsi.node.transfer-token-file)");
        }
        try {
            return Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + tokenFile + ": " + e.getMessage(), e);
        }
    }

    static Optional<Path> path(Optional<String> s) {
        return s.filter(x -> !x.isBlank()).map(Path::of);
    }
}
