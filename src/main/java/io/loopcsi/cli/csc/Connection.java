package io.loopcsi.cli.csc;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import csi.v1.ControllerGrpc;
import csi.v1.GroupControllerGrpc;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import io.grpc.ManagedChannel;
import io.loopcsi.cli.CsiChannels;
import io.loopcsi.csi.Endpoint;

/**
 * The client side of one command: a channel opened on first use, and blocking stubs whose
 * deadline ({@code --timeout}) starts with each RPC, as csc gives every request its own timeout.
 */
final class Connection implements AutoCloseable {

    private final Endpoint endpoint;
    private final Duration timeout;
    private ManagedChannel channel;

    Connection(Endpoint endpoint, Duration timeout) {
        this.endpoint = endpoint;
        this.timeout = timeout;
    }

    IdentityGrpc.IdentityBlockingStub identity() {
        return IdentityGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    GroupControllerGrpc.GroupControllerBlockingStub group() {
        return GroupControllerGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    NodeGrpc.NodeBlockingStub node() {
        return NodeGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private ManagedChannel channel() {
        if (channel == null) {
            channel = CsiChannels.open(endpoint);
        }
        return channel;
    }

    /** Does not wait for the channel to terminate: every call has completed, and a CLI exits next. */
    @Override
    public void close() {
        if (channel != null) {
            channel.shutdownNow();
        }
    }
}
