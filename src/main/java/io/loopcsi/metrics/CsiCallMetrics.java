package io.loopcsi.metrics;

import java.time.Duration;

import jakarta.inject.Singleton;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Per CSI call: {@code loopcsi_csi_requests_total{driver,service,method,code}} and the latency histogram
 * {@code loopcsi_csi_request_duration_seconds{driver,service,method}}, counted when the call closes with
 * its gRPC status. An interceptor of csi.CsiServer's grpc-java server (quarkus-grpc's own metrics
 * see only Quarkus' server, which serves no CSI). Labels are bounded: CSI's methods and gRPC's codes.
 */
@Singleton
public class CsiCallMetrics implements ServerInterceptor {

    /** Histogram buckets: from a Probe (ms) to an mkfs or a copy of a large image (minutes). */
    static final Duration[] BUCKETS = { Duration.ofMillis(5), Duration.ofMillis(25), Duration.ofMillis(100), Duration.ofMillis(250),
            Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(120) };

    private final MeterRegistry registry;
    private final String driver;

    CsiCallMetrics(MeterRegistry registry, io.loopcsi.csi.DriverConfig config) {
        this.registry = registry;
        this.driver = config.driverName();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        MethodDescriptor<Q, R> m = call.getMethodDescriptor();
        String service = simpleService(m.getServiceName());
        String method = m.getBareMethodName() == null ? "unknown" : m.getBareMethodName();
        long start = System.nanoTime();
        return next.startCall(new SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                record(service, method, status.getCode(), System.nanoTime() - start);
                super.close(status, trailers);
            }
        }, headers);
    }

    void record(String service, String method, Status.Code code, long nanos) {
        Counter.builder("loopcsi.csi.requests").description("CSI calls answered, by service, method and gRPC code")
                .tags("driver", driver, "service", service, "method", method, "code", code.name()).register(registry).increment();
        Timer.builder("loopcsi.csi.request.duration").description("Time to answer a CSI call, by service and method")
                .tags("driver", driver, "service", service, "method", method).serviceLevelObjectives(BUCKETS).register(registry)
                .record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** "csi.v1.Controller" → "Controller". */
    static String simpleService(String full) {
        if (full == null) {
            return "unknown";
        }
        int dot = full.lastIndexOf('.');
        return dot < 0 ? full : full.substring(dot + 1);
    }
}
