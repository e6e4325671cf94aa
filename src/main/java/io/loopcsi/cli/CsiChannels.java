package io.loopcsi.cli;

import java.util.concurrent.TimeUnit;

import io.loopcsi.csi.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;

/** gRPC client channels to a CSI endpoint (unix socket or TCP), plaintext as CSI uses them. */
public final class CsiChannels {

    private CsiChannels() {
    }

    public static ManagedChannel open(Endpoint endpoint) {
        if (!endpoint.isUnix()) {
            return NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port()).usePlaintext().build();
        }
        if (!Epoll.isAvailable()) {
            throw new IllegalStateException("unix sockets need netty's native epoll transport: " + Epoll.unavailabilityCause());
        }
        EpollEventLoopGroup group = new EpollEventLoopGroup(1);
        ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(endpoint.socket().toString()))
                .eventLoopGroup(group)
                .channelType(EpollDomainSocketChannel.class)
                // the authority of a unix socket names nothing; send what current grpc-go sends
                .overrideAuthority("localhost")
                .usePlaintext()
                .build();
        return new ClosingChannel(channel, group);
    }

    /** Shuts the event loop group down with the channel. */
    private static final class ClosingChannel extends io.grpc.ManagedChannel {
        private final ManagedChannel delegate;
        private final EpollEventLoopGroup group;

        ClosingChannel(ManagedChannel delegate, EpollEventLoopGroup group) {
            this.delegate = delegate;
            this.group = group;
        }

        @Override
        public ManagedChannel shutdown() {
            delegate.shutdown();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            return this;
        }

        @Override
        public boolean isShutdown() {
            return delegate.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return delegate.isTerminated();
        }

        @Override
        public ManagedChannel shutdownNow() {
            delegate.shutdownNow();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            return this;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return delegate.awaitTermination(timeout, unit);
        }

        @Override
        public <Q, R> io.grpc.ClientCall<Q, R> newCall(io.grpc.MethodDescriptor<Q, R> method, io.grpc.CallOptions options) {
            return delegate.newCall(method, options);
        }

        @Override
        public String authority() {
            return delegate.authority();
        }
    }
}
