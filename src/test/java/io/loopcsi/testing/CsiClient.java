package io.loopcsi.testing;

import java.nio.file.Path;

import csi.v1.ControllerGrpc;
import csi.v1.GroupControllerGrpc;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import io.grpc.ManagedChannel;
import io.loopcsi.cli.CsiChannels;
import io.loopcsi.csi.Endpoint;

/** Blocking stubs of the CSI services over one channel to a unix socket or a tcp endpoint. */
public final class CsiClient implements AutoCloseable {

    public final ManagedChannel channel;
    public final IdentityGrpc.IdentityBlockingStub identity;
    public final ControllerGrpc.ControllerBlockingStub controller;
    public final NodeGrpc.NodeBlockingStub node;
    public final GroupControllerGrpc.GroupControllerBlockingStub group;

    public CsiClient(Path socket) {
        this(Endpoint.parse("unix://" + socket));
    }

    public CsiClient(Endpoint endpoint) {
        channel = CsiChannels.open(endpoint);
        identity = IdentityGrpc.newBlockingStub(channel);
        controller = ControllerGrpc.newBlockingStub(channel);
        node = NodeGrpc.newBlockingStub(channel);
        group = GroupControllerGrpc.newBlockingStub(channel);
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
