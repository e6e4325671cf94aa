package io.loopcsi.handoff;

import io.grpc.Status;
import io.loopcsi.engine.EngineException;

/**
 * gRPC status codes in the hand-off objects' status: the node writes the code its engine's
 * failure maps to (the same mapping as the CSI services), the controller answers with that code.
 */
public final class Codes {

    public static final String OK = "OK";

    private Codes() {
    }

    public static String of(EngineException.Kind kind) {
        return kind.name(); // the kinds are named after the gRPC codes they map to
    }

    /** The status a node's answer stands for; an unknown code is UNKNOWN, keeping the message. */
    public static Status status(String code, String message) {
        Status.Code c;
        try {
            c = Status.Code.valueOf(code == null ? "UNKNOWN" : code);
        } catch (IllegalArgumentException e) {
            c = Status.Code.UNKNOWN;
        }
        return c.toStatus().withDescription(message);
    }
}
