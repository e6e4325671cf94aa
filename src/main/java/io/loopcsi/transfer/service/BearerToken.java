package io.loopcsi.transfer.service;

import java.util.concurrent.Executor;
import java.util.function.Supplier;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.Status;

/**
 * The caller's token in every call's {@code authorization: Bearer} header, read anew for each call
 * (kubelet rotates a projected token file). Sent only over the TLS channel of {@link TransferClient}.
 */
public final class BearerToken extends CallCredentials {

    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final Supplier<String> token;

    public BearerToken(Supplier<String> token) {
        this.token = token;
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        executor.execute(() -> {
            try {
                Metadata m = new Metadata();
                m.put(AUTHORIZATION, "Bearer " + token.get());
                applier.apply(m);
            } catch (RuntimeException e) {
                applier.fail(Status.UNAUTHENTICATED.withDescription("cannot read this node's transfer token: " + e.getMessage()).withCause(e));
            }
        });
    }
}
