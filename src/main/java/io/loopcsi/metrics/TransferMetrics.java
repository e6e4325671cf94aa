package io.loopcsi.metrics;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Singleton;

import io.loopcsi.csi.DriverConfig;
import io.loopcsi.csi.EngineBeans;
import io.loopcsi.transfer.TransferObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * The node's transfers between nodes (issue 35), labelled {@code driver} and {@code node}:
 * {@code loopcsi_transfer_sent_bytes_total} (as source), {@code loopcsi_transfer_received_bytes_total}
 * (as destination), {@code loopcsi_transfers_active{direction}} (streams served, fetches under
 * way), {@code loopcsi_transfer_failures_total{reason}} (fetches that failed) and
 * {@code loopcsi_transfer_duration_seconds} (fetches, whichever way they ended). The counters and
 * gauges exist at 0 from the start, so rates and the stuck-transfer alert need no absent().
 * Plain Micrometer meters: the same series on the JVM and in the native executable.
 */
@Singleton
@jakarta.enterprise.inject.Typed(TransferMetrics.class) // not a TransferObserver bean: roles.MetricsWiring hands this one or none
public class TransferMetrics implements TransferObserver {

    static final Duration[] BUCKETS = { Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15), Duration.ofSeconds(30),
            Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(5), Duration.ofMinutes(10), Duration.ofMinutes(30),
            Duration.ofHours(1), Duration.ofHours(2) };

    private final MeterRegistry registry;
    private final Tags tags;
    private final Counter sent;
    private final Counter received;
    private final AtomicLong sending = new AtomicLong();
    private final AtomicLong receiving = new AtomicLong();
    private final Timer duration;

    TransferMetrics(MeterRegistry registry, DriverConfig config) {
        this.registry = registry;
        this.tags = Tags.of("driver", config.driverName(), "node", EngineBeans.nodeId(config));
        this.sent = Counter.builder("loopcsi.transfer.sent").baseUnit("bytes").description("Data bytes this node sent as a transfer's source")
                .tags(tags).register(registry);
        this.received = Counter.builder("loopcsi.transfer.received").baseUnit("bytes")
                .description("Data bytes this node received and checked as a transfer's destination").tags(tags).register(registry);
        Gauge.builder("loopcsi.transfers.active", sending, AtomicLong::get).description("Transfers under way on this node, by direction")
                .tags(tags.and("direction", "send")).register(registry);
        Gauge.builder("loopcsi.transfers.active", receiving, AtomicLong::get).description("Transfers under way on this node, by direction")
                .tags(tags.and("direction", "receive")).register(registry);
        this.duration = Timer.builder("loopcsi.transfer.duration").description("Time a fetch from another node took, however it ended")
                .tags(tags).serviceLevelObjectives(BUCKETS).register(registry);
    }

    @Override
    public void bytes(Direction d, long bytes) {
        (d == Direction.SEND ? sent : received).increment(bytes);
    }

    @Override
    public void started(Direction d) {
        (d == Direction.SEND ? sending : receiving).incrementAndGet();
    }

    @Override
    public void ended(Direction d) {
        (d == Direction.SEND ? sending : receiving).decrementAndGet();
    }

    @Override
    public void fetched(long nanos) {
        duration.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void failed(String reason) {
        Counter.builder("loopcsi.transfer.failures").description("Fetches from another node that failed, by reason")
                .tags(tags.and("reason", reason.toLowerCase(Locale.ROOT))).register(registry).increment();
    }
}
