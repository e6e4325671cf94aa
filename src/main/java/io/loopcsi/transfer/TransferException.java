package io.loopcsi.transfer;

/**
 * A transfer refused or failed, with the reason a person needs. The kind decides the gRPC status
 * the transfer service answers with (docs/architecture.md, "Transfer"): INVALID is
 * INVALID_ARGUMENT (a plan or a chunk that breaks the rules: nothing of it is written), MISMATCH is
 * DATA_LOSS (content that does not hash to what the source said: the volume is not answered as
 * made), DENIED is PERMISSION_DENIED (a caller or a request the authorisation does not cover),
 * STATE is INTERNAL (the destination cannot read or write its own files).
 */
public final class TransferException extends RuntimeException {

    public enum Kind { INVALID, MISMATCH, DENIED, STATE }

    private final Kind kind;

    public TransferException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public TransferException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    static TransferException invalid(String message) {
        return new TransferException(Kind.INVALID, message);
    }

    static TransferException mismatch(String message) {
        return new TransferException(Kind.MISMATCH, message);
    }

    static TransferException denied(String message) {
        return new TransferException(Kind.DENIED, message);
    }

    static TransferException state(String message, Throwable cause) {
        return new TransferException(Kind.STATE, message, cause);
    }
}
