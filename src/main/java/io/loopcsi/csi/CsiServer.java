package io.loopcsi.csi;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.quarkus.grpc.GrpcService;

/**
 * Serves the CSI services on the driver's endpoint ({@code loopcsi.endpoint}: a unix socket or
 * tcp host:port) with grpc-java's Netty server, not with Quarkus' Vert.x HTTP server.
 *
 * <p>Why: Vert.x's HTTP/2 server resets every stream whose {@code :authority} is not a
 * {@code host[:port]} (Http2ServerConnection.isMalformedRequest: RST_STREAM PROTOCOL_ERROR), and
 * there is no option to relax it. On a unix socket the authority means nothing, and real CSI
 * clients send what they like: grpc-go before 1.1x (kubelet's CSI client of that generation,
 * GoCSI's csc) sends the socket path ({@code tmp/x/csi.sock}), newer ones {@code localhost},
 * others nothing. gRPC's own servers treat the authority as opaque; grpc-java's does too.
 *
 * <p>Calls run on a bounded pool of worker threads (volume work spawns processes and copies
 * files). At shutdown new calls are refused and calls in flight get {@code quarkus.shutdown.timeout}
 * to finish; nothing is unmounted or detached.
 */
@Singleton
public class CsiServer {

    private static final Logger LOG = Logger.getLogger(CsiServer.class);
    /** Worker threads for calls; more calls than this queue (operations on one volume serialize anyway). */
    static final int WORKERS = 32;
    /** The property of DriverConfig.csiBindPath(), set by the launcher. */
    public static final String BIND_PATH = "loopcsi.csi-bind-path";

    private final DriverConfig config;
    private final Duration shutdownTimeout;
    private final Instance<BindableService> services;
    /** What wraps every call (the call metrics where metrics are served): chosen by roles/, which this package does not name. */
    @jakarta.inject.Inject
    CallInterceptors interceptors;
    private Server server;
    private ThreadPoolExecutor workers;
    private EventLoopGroup loops;

    CsiServer(DriverConfig config, @ConfigProperty(name = "quarkus.shutdown.timeout", defaultValue = "30s") Duration shutdownTimeout,
            @GrpcService Instance<BindableService> services) {
        this.config = config;
        this.shutdownTimeout = shutdownTimeout;
        this.services = services;
    }

    /** Binds and serves the CSI services; called by roles.RoleWiring in the roles that serve CSI on an endpoint. */
    public void start() throws IOException {
        if (config.endpoint().isEmpty()) {
            return; // no endpoint (a test of the services alone): nothing to serve on
        }
        Endpoint ep = Endpoint.parse(config.endpoint().get());
        NettyServerBuilder b;
        if (ep.isUnix()) {
            if (!Epoll.isAvailable()) {
                throw new IllegalStateException("serving on a unix socket needs netty's epoll transport: " + Epoll.unavailabilityCause());
            }
            loops = new EpollEventLoopGroup(2);
            b = NettyServerBuilder.forAddress(new DomainSocketAddress(config.csiBindPath().orElse(ep.socket().toString())))
                    .channelType(EpollServerDomainSocketChannel.class)
                    .bossEventLoopGroup(loops)
                    .workerEventLoopGroup(loops);
        } else {
            b = NettyServerBuilder.forAddress(new InetSocketAddress(ep.host(), ep.port()));
        }
        AtomicInteger n = new AtomicInteger();
        workers = new ThreadPoolExecutor(WORKERS, WORKERS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "csi-call-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        workers.allowCoreThreadTimeOut(true);
        b.executor(workers)
                // sidecars may ping idle connections to detect a dead driver: never answer that with GOAWAY
                .permitKeepAliveWithoutCalls(true)
                .permitKeepAliveTime(1, TimeUnit.SECONDS);
        List<String> names = new java.util.ArrayList<>();
        for (BindableService s : services) {
            var def = s.bindService();
            b.addService(io.grpc.ServerInterceptors.intercept(def, interceptors.list()));
            names.add(def.getServiceDescriptor().getName());
        }
        server = b.build().start();
        LOG.debugf("CSI services %s on %s (%s)", names, ep, server.getListenSockets());
    }

    /** Refuses new calls and gives those in flight quarkus.shutdown.timeout; unmounts and detaches nothing. */
    public void stop() throws InterruptedException {
        if (server == null) {
            return;
        }
        server.shutdown();
        if (!server.awaitTermination(shutdownTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.warnf("CSI calls still running after %s; cancelling them", shutdownTimeout);
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        }
        workers.shutdownNow();
        if (loops != null) {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
