package io.loopcsi.transfer.service;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.transfer.TransferException;

/** The gRPC status of a refused or failed transfer (docs/architecture.md, "Transfer": bad input). */
public final class TransferStatus {

    private TransferStatus() {
    }

    public static Status.Code codeOf(TransferException.Kind kind) {
        return switch (kind) {
            case INVALID -> Status.Code.INVALID_ARGUMENT;
            case MISMATCH -> Status.Code.DATA_LOSS;
            case DENIED -> Status.Code.PERMISSION_DENIED;
            case STATE -> Status.Code.INTERNAL;
        };
    }

    public static StatusRuntimeException of(TransferException e) {
        return Status.fromCode(codeOf(e.kind())).withDescription(e.getMessage()).asRuntimeException();
    }
}
