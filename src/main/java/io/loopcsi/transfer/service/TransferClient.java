package io.loopcsi.transfer.service;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import javax.net.ssl.SSLException;

import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.loopcsi.transfer.Chunk;
import io.loopcsi.transfer.DigestFormat;
import io.loopcsi.transfer.ImageReceiver;
import io.loopcsi.transfer.RangeList;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferPlan;
import io.loopcsi.transfer.TransferState;
import io.loopcsi.transfer.WriteBehind;
import io.loopcsi.transfer.tls.NodeKeys;
import io.loopcsi.transfer.tls.PinnedTrustManager;
import io.loopcsi.transfer.v1.ChunkMessage;
import io.loopcsi.transfer.v1.ChunksRequest;
import io.loopcsi.transfer.v1.PlanRequest;
import io.loopcsi.transfer.v1.TransferGrpc;

/**
 * The destination node's side: fetches a transfer from the source node into the destination's own
 * image through {@link ImageReceiver}, which checks every chunk and records the progress.
 *
 * <p>One {@link #fetch} is one attempt: the plan, then the chunks from the first one not recorded
 * (0, or where an earlier attempt stopped), then the digest of what was written compared with the
 * plan's. A cut (the network, the source's restart) ends the attempt with the source's status
 * (UNAVAILABLE, ...) after the chunks written so far are synced and recorded, so the next attempt
 * goes on from there. What the destination refuses ends it with a {@link TransferException}: a
 * chunk that breaks the plan (INVALID) or its hash (MISMATCH), of which nothing is written; a
 * digest that differs at the end (MISMATCH): the image and the progress are deleted.
 */
public final class TransferClient implements AutoCloseable {

    /**
     * Chunks received and waiting for the writer, besides the one it writes and the one gRPC
     * receives: the destination holds at most 3 chunks of the transfer (3 MiB at the 1 MiB chunks
     * TransferFetch asks for; 192 MiB at the protocol's largest, which no caller here asks), plus
     * gRPC's HTTP/2 receive window (1 MiB, grown by its BDP estimate to at most 8 MiB; grpc-java
     * 1.69.1 NettyChannelBuilder DEFAULT_FLOW_CONTROL_WINDOW, AbstractNettyHandler).
     */
    static final int HAND_OFF = 1;

    /** The largest chunk (64 MiB) and its framing. */
    static final int MAX_MESSAGE = (64 << 20) + (1 << 20);

    /** What an attempt did: the content's digest, where it started and the data bytes it received. */
    public record Result(String digest, long fromChunk, long bytesReceived) {
    }

    /** Called after each chunk is written, with the chunk's index and its data bytes (progress, tests). */
    @FunctionalInterface
    public interface Progress {
        void chunk(long index, long bytes);

        /** Called once an attempt has the source's plan and knows its first chunk (0, or where an earlier attempt stopped). */
        default void planned(TransferPlan plan, long fromChunk) {
        }
    }

    private final ManagedChannel channel;
    private final TransferGrpc.TransferBlockingStub stub;

    /**
     * A client of the source node at host:port, which must present the certificate of
     * {@code serverPin} (SHA-256); the client presents its own {@code keys}, and {@code credentials}
     * (the caller's token, or null) go with every call.
     */
    public TransferClient(String host, int port, String serverPin, NodeKeys keys, CallCredentials credentials) {
        try {
            var tls = GrpcSslContexts.forClient()
                    .keyManager(keys.privateKey(), keys.certificate())
                    .trustManager(new PinnedTrustManager(() -> Set.of(serverPin), "the source node"))
                    .build();
            this.channel = NettyChannelBuilder.forAddress(host, port).sslContext(tls).maxInboundMessageSize(MAX_MESSAGE).build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot set up TLS for the transfer client: " + e.getMessage(), e);
        }
        TransferGrpc.TransferBlockingStub s = TransferGrpc.newBlockingStub(ClientInterceptors.intercept(channel, new ChunkParsing()));
        this.stub = credentials == null ? s : s.withCallCredentials(credentials);
    }

    /**
     * Chunks calls parse their messages with {@link Messages#chunks} (one copy of the data instead of
     * three), into the arrays of the call's {@link #ARRAYS} option (the call's transfer attempt's).
     */
    static final class ChunkParsing implements ClientInterceptor {
        static final CallOptions.Key<ChunkArrays> ARRAYS = CallOptions.Key.create("loopcsi-chunk-arrays");

        @Override
        @SuppressWarnings("unchecked")
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            if (method.getFullMethodName().equals(TransferGrpc.getChunksMethod().getFullMethodName())) {
                MethodDescriptor<Q, A> m = method.toBuilder(method.getRequestMarshaller(),
                        (MethodDescriptor.Marshaller<A>) Messages.chunks(options.getOption(ARRAYS))).build();
                return next.newCall(m, options);
            }
            return next.newCall(method, options);
        }
    }

    /**
     * Fetches the transfer of {@code source} into {@code image} (made here if the progress in
     * {@code dataDir} does not go on with it), which must be {@code expectedSize} bytes.
     * {@code ownRanges} gives the data ranges of the image, to read back what an earlier attempt wrote.
     */
    public Result fetch(String transferId, String source, int chunkSize, Path dataDir, Path image, long expectedSize,
            Function<Path, RangeList> ownRanges, Progress progress) {
        List<DigestFormat> offered = offer(dataDir, transferId);
        TransferPlan plan = Messages.fromWire(stub.plan(PlanRequest.newBuilder().setTransferId(transferId).setSource(source)
                .setChunkSize(chunkSize).addAllDigestFormats(offered.stream().map(DigestFormat::wireName).toList()).build()), offered);
        if (!plan.transferId().equals(transferId) || !plan.source().equals(source)) {
            throw new TransferException(TransferException.Kind.INVALID, "the source node answered the plan of " + plan.transferId() + " of "
                    + plan.source() + " to a request for " + transferId + " of " + source);
        }
        ImageReceiver receiver = ImageReceiver.open(dataDir, image, plan, expectedSize);
        long from = receiver.nextChunk();
        if (from > 0) {
            try {
                receiver.verifyWritten(ownRanges.apply(image)); // what an earlier attempt wrote goes into the digest too
            } catch (RuntimeException e) {
                receiver.close();
                throw e;
            }
        }
        long received = 0;
        if (progress != null) {
            progress.planned(plan, from);
        }
        try {
            if (from < plan.chunks()) {
                received = receive(receiver, plan, from, progress);
            }
        } catch (RuntimeException e) {
            // what was written and checked is kept: the next attempt, or this node's after its restart, goes on from here.
            // A node that stops interrupts its work threads, and a FileChannel used on an interrupted thread closes itself
            // (ClosedByInterruptException): the checkpoint runs with the interrupt cleared, which is then set again.
            boolean interrupted = Thread.interrupted();
            try {
                receiver.checkpoint();
            } catch (RuntimeException c) {
                e.addSuppressed(c);
            } finally {
                receiver.close();
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            throw e;
        }
        try {
            String digest = receiver.finish();
            receiver.close();
            return new Result(digest, from, received);
        } catch (TransferException e) {
            if (e.kind() == TransferException.Kind.MISMATCH) {
                receiver.abandon();
            } else {
                receiver.close();
            }
            throw e;
        }
    }

    /** The formats offered, best first: a resumed transfer's own format ahead of this release's preference. */
    static List<DigestFormat> offer(Path dataDir, String transferId) {
        List<DigestFormat> offered = new ArrayList<>();
        TransferState.savedFormat(dataDir, transferId).ifPresent(offered::add);
        for (DigestFormat f : DigestFormat.OFFERED) {
            if (!offered.contains(f)) {
                offered.add(f);
            }
        }
        return offered;
    }

    private long receive(ImageReceiver receiver, TransferPlan plan, long from, Progress progress) {
        long[] received = { 0 };
        long expect = from;
        // a cancellable context: a chunk refused here ends the stream at once instead of leaving the source sending
        Context.CancellableContext ctx = Context.current().withCancellation();
        // checks and writes on a thread of its own, so that this thread asks gRPC for the next chunk meanwhile (WriteBehind)
        ChunkArrays arrays = new ChunkArrays();
        WriteBehind<Chunk> writer = new WriteBehind<>("transfer-write-" + plan.transferId(), HAND_OFF, chunk -> {
            receiver.accept(chunk);
            arrays.give(chunk); // written: nothing refers to its array any more
            received[0] += chunk.dataBytes();
            if (progress != null) {
                progress.chunk(chunk.index(), chunk.dataBytes());
            }
        }, () -> ctx.cancel(null));
        Context previous = ctx.attach();
        try {
            Iterator<ChunkMessage> it = stub.withOption(ChunkParsing.ARRAYS, arrays).chunks(ChunksRequest.newBuilder().setTransferId(plan.transferId()).setSource(plan.source())
                    .setFromChunk(from).setDigest(plan.digest()).build());
            while (it.hasNext()) {
                ChunkMessage m = it.next();
                if (m.getIndex() != expect) {
                    throw new TransferException(TransferException.Kind.INVALID, "transfer " + plan.transferId() + ": the source sent chunk "
                            + m.getIndex() + " where chunk " + expect + " was due; nothing of it written");
                }
                writer.put(Messages.fromWire(m));
                expect++;
            }
        } catch (RuntimeException | Error e) {
            // the chunks handed over before this are written first (the caller records them); a chunk the writer
            // refused came before this error (it cancelled the stream), so its failure is the one to report
            ctx.cancel(null);
            try {
                writer.finish();
            } catch (RuntimeException | Error w) {
                if (w != e) {
                    w.addSuppressed(e);
                }
                throw w;
            }
            throw e;
        } finally {
            ctx.detach(previous);
            ctx.cancel(null);
        }
        writer.finish();
        if (expect != plan.chunks()) {
            throw new TransferException(TransferException.Kind.INVALID, "transfer " + plan.transferId() + ": the source ended the stream at chunk "
                    + expect + " of " + plan.chunks());
        }
        return received[0];
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
