package io.loopcsi.metrics;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.loopcsi.csi.DriverConfig;
import io.loopcsi.csi.EngineBeans;
import io.loopcsi.engine.LoopDevices;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.engine.VolumeProvider;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * The pool on this node as gauges, labelled {@code driver} and {@code node}: capacity, allocated,
 * bytes the sparse images really use, host filesystem free, what volumes may still write
 * (promised), available; volumes by mode and fs_type, snapshots, attached loop devices, volumes
 * whose condition is abnormal, volumes whose loop device fell back to buffered I/O. Only in the roles that hold a pool directory (standalone, node).
 *
 * <p>All of them come from one {@link Sample} taken at most every {@link #MAX_AGE_NANOS}, so a
 * scrape measures the pool once (the engine's capacity runs one {@code stat} over every image).
 */
@Singleton
public class PoolMetrics {

    private static final Logger LOG = Logger.getLogger(PoolMetrics.class);
    static final long MAX_AGE_NANOS = 5_000_000_000L;

    /** One measurement of the pool. */
    record Sample(PoolCapacity capacity, long[] volumesByKind, long snapshots, long attached, long abnormal, long buffered) {
    }

    /** The volume kinds a pool can hold: the label values of loopcsi_volumes. */
    static final List<String[]> KINDS = List.of(new String[] { "block", "none" }, new String[] { "filesystem", "xfs" },
            new String[] { "filesystem", "ext4" });

    private final MeterRegistry registry;
    private final DriverConfig config;
    private final Instance<VolumeProvider> provider;
    private final Instance<PoolDirectory> pool;
    private final Instance<LoopDevices> loops;
    private Sample sample;
    private long sampledAt;

    PoolMetrics(MeterRegistry registry, DriverConfig config, Instance<VolumeProvider> provider, Instance<PoolDirectory> pool,
            Instance<LoopDevices> loops) {
        this.registry = registry;
        this.config = config;
        this.provider = provider;
        this.pool = pool;
        this.loops = loops;
    }

    /** Registers the gauges: roles.RoleWiring, in the roles that hold a pool directory and serve metrics. */
    public void register() {
        Tags tags = Tags.of("driver", config.driverName(), "node", EngineBeans.nodeId(config));
        bytes("loopcsi.pool.capacity", "The pool's configured capacity on this node", tags, s -> s.capacity().totalBytes());
        bytes("loopcsi.pool.allocated", "Bytes provisioned: volume capacities, snapshot sizes, creates in flight", tags,
                s -> s.capacity().allocatedBytes());
        bytes("loopcsi.pool.used", "Bytes the sparse volume images really occupy on the host, plus snapshot images", tags,
                s -> s.capacity().allocatedBytes() - s.capacity().hostPromisedBytes());
        bytes("loopcsi.pool.host.free", "Free bytes of the host filesystem under the pool directory", tags,
                s -> s.capacity().hostFreeBytes());
        bytes("loopcsi.pool.host.promised", "Bytes existing volumes may still write to the host: the unwritten part of their images",
                tags, s -> s.capacity().hostPromisedBytes());
        bytes("loopcsi.pool.available", "Bytes a new thin volume may get: min((capacity - charged) x thin overcommit,"
                + " host free - host reserve - promised)", tags, s -> s.capacity().availableBytes());
        bytes("loopcsi.pool.available.thick", "Bytes a new thick volume may get: min(capacity - charged, host free - host reserve - promised)",
                tags, s -> s.capacity().availableThickBytes());
        bytes("loopcsi.pool.charged", "What the capacity is charged: thick volumes and snapshots in full, thin volumes their size /"
                + " thin overcommit", tags, s -> s.capacity().chargedBytes());
        bytes("loopcsi.pool.host.reserve", "Free bytes of the host filesystem the pool never counts as available (--host-reserve)", tags,
                s -> s.capacity().hostReserveBytes());
        for (int i = 0; i < KINDS.size(); i++) {
            int kind = i;
            gauge("loopcsi.volumes", "Volumes in the pool, by mode and filesystem", tags.and("mode", KINDS.get(i)[0], "fs_type",
                    KINDS.get(i)[1]), s -> s.volumesByKind()[kind]);
        }
        gauge("loopcsi.snapshots", "Snapshots in the pool", tags, Sample::snapshots);
        gauge("loopcsi.loop.devices.attached", "Loop devices attached to images of the pool", tags, Sample::attached);
        gauge("loopcsi.volumes.abnormal", "Volumes whose CSI volume condition is abnormal (image missing or short, or a thick image"
                + " short of blocks the node could not allocate again)", tags, Sample::abnormal);
        gauge("loopcsi.volumes.buffered", "Attached volumes whose loop device does buffered I/O although their directIO is auto or on:"
                + " the host filesystem refuses direct I/O at their sector size", tags, Sample::buffered);
    }

    private void bytes(String name, String help, Tags tags, ToDoubleFunction<Sample> f) {
        Gauge.builder(name, this, m -> m.value(f)).description(help).baseUnit("bytes").tags(tags).register(registry);
    }

    private void gauge(String name, String help, Tags tags, ToDoubleFunction<Sample> f) {
        Gauge.builder(name, this, m -> m.value(f)).description(help).tags(tags).register(registry);
    }

    private double value(ToDoubleFunction<Sample> f) {
        Sample s = sample();
        return s == null ? Double.NaN : f.applyAsDouble(s);
    }

    /** The current sample, taken anew when older than MAX_AGE_NANOS; null (NaN gauges) when the pool cannot be read. */
    synchronized Sample sample() {
        long now = System.nanoTime();
        if (sample == null || now - sampledAt > MAX_AGE_NANOS) {
            try {
                sample = measure();
            } catch (RuntimeException e) {
                LOG.warnf("cannot measure the pool for metrics: %s", e.getMessage());
                sample = null;
            }
            sampledAt = now;
        }
        return sample;
    }

    private Sample measure() {
        VolumeProvider p = provider.get();
        PoolCapacity capacity = p.capacity();
        long[] kinds = new long[KINDS.size()];
        long abnormal = 0;
        List<VolumeMeta> volumes = p.volumes();
        for (VolumeMeta v : volumes) {
            String fs = v.mode() == VolumeMode.BLOCK ? "none" : v.fsType().toLowerCase(Locale.ROOT);
            for (int i = 0; i < KINDS.size(); i++) {
                if (KINDS.get(i)[1].equals(fs)) {
                    kinds[i]++;
                }
            }
            try {
                if (p.condition(v.id()).abnormal()) {
                    abnormal++;
                }
            } catch (RuntimeException e) {
                // deleted while we looked: not a volume any more
            }
        }
        List<SnapshotMeta> snaps = p.snapshots();
        LoopDevices l = loops.get();
        LoopDevices.Attached attached = l.attachedUnder(pool.get().root()); // one scan of /sys/block for both gauges
        return new Sample(capacity, kinds, snaps.size(), attached.count(), abnormal, l.bufferedVolumes(pool.get(), volumes, attached));
    }
}
