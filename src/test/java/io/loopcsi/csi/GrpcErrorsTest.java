package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** The status a caller gets for failures that are not the engine's own. */
class GrpcErrorsTest {

    /** What one call answered. */
    static final class Answer implements StreamObserver<String> {
        Status status = Status.OK;

        @Override
        public void onNext(String value) {
        }

        @Override
        public void onError(Throwable t) {
            status = Status.fromThrowable(t);
        }

        @Override
        public void onCompleted() {
        }
    }

    static Status answer(RuntimeException failure) {
        Answer a = new Answer();
        GrpcErrors.answer("CreateVolume", a, () -> {
            throw failure;
        });
        return a.status;
    }

    @Test
    void anApiServerThatDidNotAnswerIsUnavailableSoTheSidecarRetries() {
        // what fabric8 throws when its request timeout passes (the cause: Vert.x's TimeoutException)
        Status s = answer(new RuntimeException("The timeout period of 10000ms has been exceeded while executing GET /apis/loopcsi.io/v1alpha1/x",
                new TimeoutException("The timeout period of 10000ms has been exceeded while executing GET /apis/loopcsi.io/v1alpha1/x")));
        assertEquals(Status.Code.UNAVAILABLE, s.getCode());
        assertTrue(s.getDescription().contains("the Kubernetes API did not answer, retry: The timeout period of 10000ms"), s::toString);
        Status refused = answer(new RuntimeException(new IOException("failed", new ConnectException("Connection refused"))));
        assertEquals(Status.Code.UNAVAILABLE, refused.getCode());
    }

    @Test
    void anythingElseUnexpectedIsInternal() {
        assertEquals(Status.Code.INTERNAL, answer(new IllegalStateException("a bug")).getCode());
        assertEquals(Status.Code.INTERNAL, answer(new RuntimeException(new IOException("disk"))).getCode());
    }
}
