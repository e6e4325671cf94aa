package io.loopcsi.csi;

import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.loopcsi.engine.EngineException;

/** Runs an RPC body and answers with its response or with the gRPC status its failure maps to. */
final class GrpcErrors {

    private static final Logger LOG = Logger.getLogger(GrpcErrors.class);

    private GrpcErrors() {
    }

    static <T> void answer(String rpc, StreamObserver<T> observer, Supplier<T> body) {
        T response;
        try {
            response = body.get();
        } catch (StatusRuntimeException e) {
            LOG.debugf("%s: %s", rpc, e.getStatus());
            observer.onError(e);
            return;
        } catch (EngineException e) {
            Status status = status(e.kind()).withDescription(e.getMessage());
            if (e.kind() == EngineException.Kind.INTERNAL) {
                LOG.errorf(e, "%s failed", rpc);
            } else {
                LOG.debugf("%s: %s %s", rpc, status.getCode(), e.getMessage());
            }
            observer.onError(status.asRuntimeException());
            return;
        } catch (RuntimeException e) {
            Throwable unanswered = unanswered(e);
            if (unanswered != null) {
                // the controller role's Kubernetes API did not answer (a timeout, a refused connection):
                // transient, and the caller retries (csi-provisioner and csi-resizer treat UNAVAILABLE so)
                LOG.warnf("%s: the Kubernetes API did not answer: %s", rpc, unanswered.getMessage());
                observer.onError(Status.UNAVAILABLE.withDescription(rpc + ": the Kubernetes API did not answer, retry: "
                        + unanswered.getMessage()).asRuntimeException());
                return;
            }
            LOG.errorf(e, "%s failed unexpectedly", rpc);
            observer.onError(Status.INTERNAL.withDescription(rpc + " failed: " + e).asRuntimeException());
            return;
        }
        observer.onNext(response);
        observer.onCompleted();
    }

    /** The timeout or refused connection behind a failure, if that is what it is. */
    static Throwable unanswered(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.util.concurrent.TimeoutException || t instanceof java.net.SocketTimeoutException
                    || t instanceof java.net.ConnectException) {
                return t;
            }
        }
        return null;
    }

    static Status status(EngineException.Kind kind) {
        return switch (kind) {
            case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case NOT_FOUND -> Status.NOT_FOUND;
            case ALREADY_EXISTS -> Status.ALREADY_EXISTS;
            case OUT_OF_RANGE -> Status.OUT_OF_RANGE;
            case RESOURCE_EXHAUSTED -> Status.RESOURCE_EXHAUSTED;
            case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
            case ABORTED -> Status.ABORTED;
            case INTERNAL -> Status.INTERNAL;
            case UNIMPLEMENTED -> Status.UNIMPLEMENTED;
        };
    }

    static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
