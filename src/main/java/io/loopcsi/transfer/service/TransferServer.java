package io.loopcsi.transfer.service;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.loopcsi.transfer.tls.NodeKeys;
import io.loopcsi.transfer.tls.PinnedTrustManager;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

/**
 * Serves the transfer service on the node's transfer port over TLS with grpc-java's Netty server
 * (as csi.CsiServer serves CSI, and for the same reason: no Vert.x HTTP server in the node role).
 * The server presents its own {@link NodeKeys}; a client must present a certificate whose
 * fingerprint is pinned ({@code clientPins}, read at each handshake), or there is no connection.
 * Each call then carries a {@link Caller} (the client's certificate fingerprint and its metadata).
 */
public final class TransferServer implements AutoCloseable {

    /** Calls served at once; more wait (the per-node limit of concurrent transfers is the controller's). */
    static final int WORKERS = 8;

    private final Server server;
    private final ThreadPoolExecutor workers;

    private TransferServer(Server server, ThreadPoolExecutor workers) {
        this.server = server;
        this.workers = workers;
    }

    /** Binds host:port (port 0: any free port) and serves. */
    public static TransferServer start(String host, int port, NodeKeys keys, Supplier<Set<String>> clientPins, BindableService service)
            throws IOException {
        SslContext tls = GrpcSslContexts.configure(SslContextBuilder.forServer(keys.privateKey(), keys.certificate()))
                .trustManager(new PinnedTrustManager(clientPins, "the client"))
                .clientAuth(ClientAuth.REQUIRE)
                .build();
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor workers = new ThreadPoolExecutor(WORKERS, WORKERS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "transfer-call-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        workers.allowCoreThreadTimeOut(true);
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .sslContext(tls)
                .executor(workers)
                .addService(ServerInterceptors.intercept(service, new CallerInterceptor()))
                .build()
                .start();
        return new TransferServer(server, workers);
    }

    public int port() {
        return server.getPort();
    }

    /** Refuses new calls and cuts those in flight (a client resumes from its last checkpoint). */
    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
    }

    /** Puts the caller's certificate fingerprint and metadata in the call's context. */
    static final class CallerInterceptor implements ServerInterceptor {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
            SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
            String fingerprint;
            try {
                Certificate[] peer = session == null ? null : session.getPeerCertificates();
                if (peer == null || peer.length == 0 || !(peer[0] instanceof X509Certificate c)) {
                    throw new SSLPeerUnverifiedException("no client certificate");
                }
                fingerprint = NodeKeys.fingerprintOf(c);
            } catch (SSLPeerUnverifiedException e) {
                call.close(Status.UNAUTHENTICATED.withDescription("the transfer service needs a client certificate"), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
            Context ctx = Context.current().withValue(Caller.KEY, new Caller(fingerprint, headers));
            return Contexts.interceptCall(ctx, call, headers, next);
        }
    }
}
