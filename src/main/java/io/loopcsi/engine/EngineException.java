package io.loopcsi.engine;

/**
 * A failure of the volume engine, classified so that the CSI layer can map it to a gRPC status
 * without the engine knowing gRPC. The message is meant for a person: it names the field, the
 * limit or the object involved and, where there is one, what to do.
 */
public class EngineException extends RuntimeException {

    public enum Kind {
        INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, OUT_OF_RANGE, RESOURCE_EXHAUSTED,
        FAILED_PRECONDITION, ABORTED, INTERNAL, UNIMPLEMENTED
    }

    private final Kind kind;

    public EngineException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public EngineException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    public static EngineException invalid(String message) {
        return new EngineException(Kind.INVALID_ARGUMENT, message);
    }

    public static EngineException notFound(String message) {
        return new EngineException(Kind.NOT_FOUND, message);
    }

    public static EngineException alreadyExists(String message) {
        return new EngineException(Kind.ALREADY_EXISTS, message);
    }

    public static EngineException outOfRange(String message) {
        return new EngineException(Kind.OUT_OF_RANGE, message);
    }

    public static EngineException exhausted(String message) {
        return new EngineException(Kind.RESOURCE_EXHAUSTED, message);
    }

    public static EngineException precondition(String message) {
        return new EngineException(Kind.FAILED_PRECONDITION, message);
    }

    public static EngineException unimplemented(String message) {
        return new EngineException(Kind.UNIMPLEMENTED, message);
    }

    public static EngineException internal(String message, Throwable cause) {
        return new EngineException(Kind.INTERNAL, message, cause);
    }
}
