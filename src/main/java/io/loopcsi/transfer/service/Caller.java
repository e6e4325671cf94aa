package io.loopcsi.transfer.service;

import io.grpc.Context;
import io.grpc.Metadata;

/**
 * Who is calling, as the transport shows it: the SHA-256 of the certificate the client presented
 * in the TLS handshake (already one of the pinned ones, or there would be no call) and the call's
 * metadata (where the caller's token travels). {@link CallerIdentity} turns it into a node name.
 */
public record Caller(String certificateFingerprint, Metadata headers) {

    static final Context.Key<Caller> KEY = Context.key("loopcsi-transfer-caller");
}
