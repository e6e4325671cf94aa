package io.loopcsi.transfer.service;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.DigestFormat;
import io.loopcsi.transfer.ImageSource;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.TransferPlan;
import io.loopcsi.transfer.v1.ChunkMessage;
import io.loopcsi.transfer.v1.ChunksRequest;
import io.loopcsi.transfer.v1.PlanReply;
import io.loopcsi.transfer.v1.PlanRequest;
import io.loopcsi.transfer.v1.TransferGrpc;

/**
 * The source node's side of the transfer protocol (docs/architecture.md, "Transfer"). It only
 * reads: a source image is opened read-only and nothing is written anywhere.
 *
 * <p>Every call is checked in this order, and refused at the first rule broken, logged with the
 * caller: the caller's node ({@link CallerIdentity}, PERMISSION_DENIED), the authorisation of the
 * transfer for that node and this source now ({@link TransferGrant#check}, PERMISSION_DENIED: an
 * unknown transfer ID is one no authorisation names), the source's image on this node (NOT_FOUND).
 * A transfer's plan is made once (one pass over the data) and kept in memory for the process' life;
 * {@code Chunks} serves only a plan made here, of the digest the caller holds (else NOT_FOUND or
 * FAILED_PRECONDITION: the caller asks {@code Plan} again, and starts over if it changed).
 *
 * <p>Bounds ({@link Limits}, StoragePool spec.transfer): the bytes of all streams together under a
 * {@link BandwidthCap}, and at most {@code concurrent} Chunks streams at once; one more is refused
 * at once with RESOURCE_EXHAUSTED, and the destination tries again later (TransferFetch). Refused
 * rather than queued: a waiting call would hold a connection and a place in a queue this node
 * forgets when it restarts, and the destination, which knows how long it has waited, decides when
 * to give up. Plan is not bounded: it reads the source on this node and sends only the plan.
 */
public final class TransferService extends TransferGrpc.TransferImplBase {

    private static final Logger LOG = Logger.getLogger(TransferService.class);

    private final String nodeName;
    private final SourceImages sources;
    private final Grants grants;
    private final CallerIdentity identity;
    private final AllocatedRanges ranges;
    private final Clock clock;
    private final Map<String, Held> plans = new ConcurrentHashMap<>();
    private final Limits limits;
    /** Chunks streams being served: one per transfer in flight. */
    private final Semaphore streams;
    /** Wakes a stream paused by the bandwidth cap (a daemon thread, made on the first pause). */
    private volatile ScheduledExecutorService pacer;

    /** A plan made here, with the data chunks' hashes its pass kept (sent with the chunks: the source hashes each chunk once). */
    private record Held(TransferPlan plan, Path image, io.loopcsi.transfer.ChunkHashes hashes) {
    }

    /** Bounds of what a node serves: its bandwidth cap, and how many Chunks streams it serves at once. */
    public record Limits(BandwidthCap cap, int concurrent) {
        public Limits {
            if (concurrent < 1) {
                throw new IllegalArgumentException("a node serves at least 1 transfer at once, not " + concurrent);
            }
        }

        public static final Limits NONE = new Limits(BandwidthCap.unlimited(), Integer.MAX_VALUE);
    }

    private volatile io.loopcsi.transfer.TransferObserver observer = io.loopcsi.transfer.TransferObserver.NONE;

    public TransferService(String nodeName, SourceImages sources, Grants grants, CallerIdentity identity, AllocatedRanges ranges, Clock clock) {
        this(nodeName, sources, grants, identity, ranges, clock, Limits.NONE);
    }

    public TransferService(String nodeName, SourceImages sources, Grants grants, CallerIdentity identity, AllocatedRanges ranges, Clock clock,
            Limits limits) {
        this.nodeName = nodeName;
        this.sources = sources;
        this.grants = grants;
        this.identity = identity;
        this.ranges = ranges;
        this.clock = clock;
        this.limits = limits;
        this.streams = new Semaphore(limits.concurrent());
    }

    /** Reports the streams this node serves and their bytes (metrics); none until set. */
    public TransferService observe(io.loopcsi.transfer.TransferObserver observer) {
        this.observer = observer;
        return this;
    }

    @Override
    public void plan(PlanRequest req, StreamObserver<PlanReply> out) {
        try {
            Path image = authorise(req.getTransferId(), req.getSource());
            int chunkSize = req.getChunkSize() == 0 ? TransferPlan.DEFAULT_CHUNK : req.getChunkSize();
            DigestFormat format = DigestFormat.choose(req.getDigestFormatsList());
            Held held = plans.compute(req.getTransferId(), (id, old) -> {
                if (old != null && old.image().equals(image) && old.plan().chunkSize() == chunkSize && old.plan().format() == format) {
                    return old;
                }
                try (ImageSource s = ImageSource.plan(id, req.getSource(), image, ranges.of(image), chunkSize, format)) {
                    return new Held(s.plan(), image, s.hashes());
                }
            });
            out.onNext(Messages.toWire(held.plan()));
            out.onCompleted();
        } catch (RuntimeException e) {
            out.onError(statusOf(e, "Plan", req.getTransferId()));
        }
    }

    @Override
    public void chunks(ChunksRequest req, StreamObserver<ChunkMessage> responses) {
        ServerCallStreamObserver<ChunkMessage> out = (ServerCallStreamObserver<ChunkMessage>) responses;
        ImageSource source;
        long from = req.getFromChunk();
        try {
            Path image = authorise(req.getTransferId(), req.getSource());
            Held held = plans.get(req.getTransferId());
            if (held == null || !held.image().equals(image)) {
                throw Status.NOT_FOUND.withDescription("no plan of transfer " + req.getTransferId() + " on node " + nodeName
                        + " (it restarted?): ask Plan first").asRuntimeException();
            }
            if (!held.plan().digest().equals(req.getDigest())) {
                throw Status.FAILED_PRECONDITION.withDescription("transfer " + req.getTransferId() + ": the source's plan has digest "
                        + held.plan().digest() + ", the caller holds " + req.getDigest() + "; ask Plan again").asRuntimeException();
            }
            long chunks = held.plan().chunks();
            if (from < 0 || from > chunks) {
                throw new TransferException(TransferException.Kind.INVALID, "chunk " + req.getFromChunk() + " is outside transfer "
                        + req.getTransferId() + " (" + chunks + " chunks)");
            }
            if (!streams.tryAcquire()) {
                throw Status.RESOURCE_EXHAUSTED.withDescription("node " + nodeName + " serves " + limits.concurrent()
                        + " transfers at once (spec.transfer.maxConcurrentPerNode); try again later").asRuntimeException();
            }
            try {
                source = ImageSource.open(image, held.plan(), held.hashes());
            } catch (RuntimeException e) {
                streams.release();
                throw e;
            }
        } catch (RuntimeException e) {
            out.onError(statusOf(e, "Chunks", req.getTransferId()));
            return;
        }
        Pump pump = new Pump(out, source, from, req.getTransferId());
        out.setOnCancelHandler(pump::stop);
        out.setOnReadyHandler(pump);
        pump.run();
    }

    /**
     * Sends chunks while the transport can take them, and goes on when it can again (onReady): a
     * slow destination never makes the source read ahead and buffer the image in memory beyond
     * the one chunk read ahead ({@code ahead}). Under a
     * bandwidth cap it pauses after a chunk for the time the cap asks and goes on from the pacer's
     * thread; grpc-java serialises its own callbacks, and {@code synchronized} keeps those and the
     * pacer's apart. It holds one of the node's stream slots until it ends, however it ends.
     */
    private final class Pump implements Runnable {
        private final ServerCallStreamObserver<ChunkMessage> out;
        private final ImageSource source;
        private final String transferId;
        /**
         * Chunk {@code next}, read ahead while the transport was busy with the previous one: the read
         * (a copy out of the page cache) overlaps the previous chunk's encryption on the event loop
         * instead of following it. One chunk per stream at most (1 MiB at the default chunk size).
         */
        private io.loopcsi.transfer.Chunk ahead;
        /**
         * The array every chunk is read into (ImageSource.read(index, into)) instead of one of its own
         * each: the chunk is read after the previous one was handed to gRPC, whose onNext serialises
         * it into the transport's buffers before it returns (grpc-java 1.69.1 core MessageFramer
         * writePayload, writeKnownLengthUncompressed: the message is drained into the framer's
         * buffers; ServerCallImpl keeps no reference), so one chunk at a time uses it: the one sent
         * next, or the one read ahead. Made at the first read, dropped once stopped.
         */
        private byte[] buffer;

        private byte[] buffer() {
            if (buffer == null) {
                buffer = new byte[source.plan().chunkSize()];
            }
            return buffer;
        }
        private long next;
        private boolean ended;
        private boolean paused;

        Pump(ServerCallStreamObserver<ChunkMessage> out, ImageSource source, long from, String transferId) {
            this.out = out;
            this.source = source;
            this.next = from;
            this.transferId = transferId;
            observer.started(io.loopcsi.transfer.TransferObserver.Direction.SEND);
        }

        @Override
        public synchronized void run() {
            if (ended || paused) {
                return;
            }
            try {
                long chunks = source.plan().chunks();
                while (next < chunks && out.isReady() && !out.isCancelled()) {
                    io.loopcsi.transfer.Chunk c = ahead != null ? ahead : source.read(next, buffer());
                    ahead = null;
                    next++;
                    out.onNext(Messages.toWire(c));
                    observer.bytes(io.loopcsi.transfer.TransferObserver.Direction.SEND, c.dataBytes());
                    long wait = limits.cap().reserve(c.dataBytes());
                    if (wait > 0 && next < chunks) {
                        paused = true;
                        pacer().schedule(this::resume, wait, TimeUnit.NANOSECONDS);
                        return;
                    }
                    if (next < chunks && !out.isReady()) {
                        ahead = source.read(next, buffer()); // while the transport encrypts and sends the chunk just handed to it
                    }
                }
                if (next == chunks) {
                    stop();
                    out.onCompleted();
                }
            } catch (RuntimeException e) {
                stop();
                if (!out.isCancelled()) {
                    out.onError(statusOf(e, "Chunks", transferId));
                }
            }
        }

        synchronized void resume() {
            paused = false;
            run();
        }

        synchronized void stop() {
            if (ended) {
                return;
            }
            ended = true;
            ahead = null;
            buffer = null;
            source.close();
            streams.release();
            observer.ended(io.loopcsi.transfer.TransferObserver.Direction.SEND);
        }
    }

    private ScheduledExecutorService pacer() {
        ScheduledExecutorService p = pacer;
        if (p == null) {
            synchronized (this) {
                if (pacer == null) {
                    pacer = Executors.newSingleThreadScheduledExecutor(r -> {
                        Thread t = new Thread(r, "transfer-pacer-" + nodeName);
                        t.setDaemon(true);
                        return t;
                    });
                }
                p = pacer;
            }
        }
        return p;
    }

    /** The transfers whose plan this node holds. */
    public java.util.Set<String> planned() {
        return java.util.Set.copyOf(plans.keySet());
    }

    /** Forgets a transfer's plan (its authorisation ended). */
    public void forget(String transferId) {
        plans.remove(transferId);
    }

    private Path authorise(String transferId, String source) {
        Caller caller = Caller.KEY.get();
        if (caller == null) {
            throw new TransferException(TransferException.Kind.DENIED, "the call came without a client certificate");
        }
        String callerNode = identity.nodeOf(caller);
        TransferGrant.check(grants.find(transferId).orElse(null), transferId, source, nodeName, callerNode, clock.instant());
        return sources.imageOf(source, transferId).orElseThrow(() -> Status.NOT_FOUND.withDescription("source " + source + " of transfer "
                + transferId + " is not on node " + nodeName).asRuntimeException());
    }

    private StatusRuntimeException statusOf(RuntimeException e, String call, String transferId) {
        Caller caller = Caller.KEY.get();
        String who = caller == null ? "an unidentified caller" : "the caller with certificate " + caller.certificateFingerprint();
        if (e instanceof TransferException t) {
            if (t.kind() == TransferException.Kind.DENIED) {
                LOG.warnf("transfer %s: %s refused to %s: %s", transferId, call, who, t.getMessage());
            } else if (t.kind() == TransferException.Kind.STATE) {
                LOG.errorf(t, "transfer %s: %s failed on node %s", transferId, call, nodeName);
            }
            return TransferStatus.of(t);
        }
        if (e instanceof StatusRuntimeException s) {
            LOG.debugf("transfer %s: %s answered %s to %s", transferId, call, s.getStatus(), who);
            return s;
        }
        LOG.errorf(e, "transfer %s: %s failed on node %s", transferId, call, nodeName);
        return Status.INTERNAL.withDescription(call + " of transfer " + transferId + " failed on node " + nodeName + ": " + e)
                .asRuntimeException();
    }
}
