package io.loopcsi.node;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.loopcsi.csi.PrivateSocket;
import io.loopcsi.node.pluginregistration.InfoRequest;
import io.loopcsi.node.pluginregistration.PluginInfo;
import io.loopcsi.node.pluginregistration.RegistrationGrpc;
import io.loopcsi.node.pluginregistration.RegistrationStatus;
import io.loopcsi.node.pluginregistration.RegistrationStatusResponse;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;

/**
 * kubelet's plugin registration (pluginregistration v1), served by the node role itself instead
 * of a node-driver-registrar sidecar: a socket in kubelet's plugins_registry directory that
 * kubelet's plugin watcher finds, asks GetInfo (type CSIPlugin, the driver name, the CSI
 * endpoint, the CSI versions), then tells the outcome with NotifyRegistrationStatus. A plain
 * grpc-netty server on an epoll domain socket, bound privately and published 0600 after the CSI
 * socket (csi.PrivateSocket, cli.Main.Serving): kubelet reaches the CSI endpoint as soon as it sees
 * this socket.
 */
final class KubeletRegistration implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(KubeletRegistration.class);
    /** The CSI spec versions kubelet may choose from (kubelet accepts 1.x). */
    static final String CSI_VERSION = "1.0.0";

    private final Path socket;
    private final String driverName;
    private final PluginInfo info;
    private Server server;
    private PrivateSocket bound;
    private final EpollEventLoopGroup group;
    private volatile Boolean registered;
    private volatile String error = "";

    KubeletRegistration(Path socket, String driverName, Path csiSocket) {
        this.socket = socket;
        this.driverName = driverName;
        this.group = new EpollEventLoopGroup(1);
        this.info = PluginInfo.newBuilder().setType("CSIPlugin").setName(driverName).setEndpoint(csiSocket.toString())
                .addSupportedVersions(CSI_VERSION).build();
    }

    /** Binds the registration socket privately; Serving publishes it once the CSI socket is published. */
    KubeletRegistration start() throws IOException {
        PrivateSocket.prepare(socket);
        bound = PrivateSocket.create(socket);
        Path csiSocket = Path.of(info.getEndpoint());
        server = NettyServerBuilder.forAddress(new DomainSocketAddress(bound.bindPath().toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(group)
                .workerEventLoopGroup(group)
                .addService(new RegistrationGrpc.RegistrationImplBase() {
                    @Override
                    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> observer) {
                        LOG.debugf("kubelet asked for the plugin info of %s", driverName);
                        observer.onNext(info);
                        observer.onCompleted();
                    }

                    @Override
                    public void notifyRegistrationStatus(RegistrationStatus status, StreamObserver<RegistrationStatusResponse> observer) {
                        registered = status.getPluginRegistered();
                        error = status.getError();
                        if (status.getPluginRegistered()) {
                            LOG.infof("kubelet registered CSI driver %s (endpoint %s)", driverName, csiSocket);
                        } else {
                            LOG.errorf("kubelet did not register CSI driver %s: %s", driverName, status.getError());
                        }
                        observer.onNext(RegistrationStatusResponse.getDefaultInstance());
                        observer.onCompleted();
                    }
                })
                .build()
                .start();
        PrivateSocket.publishOnStart(bound);
        LOG.infof("kubelet plugin registration served on %s", socket);
        return this;
    }

    /** null until kubelet said; false when it refused the registration (liveness then fails, and the restart retries). */
    Boolean registered() {
        return registered;
    }

    String error() {
        return error;
    }

    Path socket() {
        return socket;
    }

    @Override
    public void close() {
        if (bound != null) {
            bound.unpublish(); // kubelet's plugin watcher sees the removal and deregisters the driver
            bound.close();
        }
        if (server != null) {
            server.shutdown();
            try {
                server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
