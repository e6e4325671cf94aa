package io.loopcsi.operator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Singleton;

import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.NodeOrphans;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;

/**
 * The operator's view of each pool as gauges labelled {@code pool}: ready (the Ready condition),
 * node pods desired and ready, controller ready, whether the last reconcile hit a problem; and
 * {@code loopcsi_pool_reconcile_problems_total{pool,reason}}; per lost node (status.lostNodes)
 * {@code loopcsi_pool_lost_node_volumes{pool,node,reason}} and {@code loopcsi_pool_lost_node_volume_bytes}; per node with orphans {@code loopcsi_pool_orphans{pool,node,kind}}. JOSDK's own reconcile metrics
 * (operator_sdk_*, through QOSDK's micrometer support) count only reconciles that threw; the
 * reconciler reports most problems in status instead, so they are counted here.
 */
@Singleton
public class PoolGauges {

    /** What the last reconcile of a pool observed. */
    public record Observed(boolean ready, int nodesDesired, int nodesReady, boolean controllerReady, boolean failing) {
    }

    private final MeterRegistry registry;
    private final Map<String, Observed> pools = new ConcurrentHashMap<>();
    private final Map<String, List<LostNode>> lost = new ConcurrentHashMap<>();
    private final MultiGauge lostVolumes;
    private final MultiGauge lostBytes;
    private final Map<String, List<NodeOrphans>> orphans = new ConcurrentHashMap<>();
    private final MultiGauge orphanGauge;

    public PoolGauges(MeterRegistry registry) {
        this.registry = registry;
        this.lostVolumes = MultiGauge.builder("loopcsi.pool.lost.node.volumes")
                .description("Volumes of the pool on a node that does not serve it (one series per lost node; reason NotReporting or NodeDeleted)")
                .register(registry);
        this.lostBytes = MultiGauge.builder("loopcsi.pool.lost.node.volume.bytes")
                .description("Capacity of the volumes of the pool on a node that does not serve it, bytes").register(registry);
        this.orphanGauge = MultiGauge.builder("loopcsi.pool.orphans")
                .description("Orphans of the pool on a node (status.orphans): kind unclaimed (files no object names), missing (objects"
                        + " whose files are gone) or abandoned-transfer (a fetch's partial image into a volume no object names)")
                .register(registry);
    }

    /** The pool's orphans now (status.orphans): a series per node and kind that has any. */
    public void orphans(String pool, List<NodeOrphans> nodes) {
        if (nodes.isEmpty()) {
            orphans.remove(pool);
        } else {
            orphans.put(pool, List.copyOf(nodes));
        }
        republishOrphans();
    }

    private synchronized void republishOrphans() {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        orphans.forEach((pool, nodes) -> nodes.forEach(n -> {
            if (n.getUnclaimed() != null && n.getUnclaimed() > 0) {
                rows.add(MultiGauge.Row.of(Tags.of("pool", pool, "node", n.getNode(), "kind", "unclaimed"), n.getUnclaimed()));
            }
            if (n.getMissing() != null && n.getMissing() > 0) {
                rows.add(MultiGauge.Row.of(Tags.of("pool", pool, "node", n.getNode(), "kind", "missing"), n.getMissing()));
            }
            if (n.getAbandonedTransfers() != null && n.getAbandonedTransfers() > 0) {
                rows.add(MultiGauge.Row.of(Tags.of("pool", pool, "node", n.getNode(), "kind", "abandoned-transfer"), n.getAbandonedTransfers()));
            }
        }));
        orphanGauge.register(rows, true);
    }

    /** The pool's lost nodes now (status.lostNodes): one series per node, none once it serves again or is forgotten. */
    public void lostNodes(String pool, List<LostNode> nodes) {
        if (nodes.isEmpty()) {
            lost.remove(pool);
        } else {
            lost.put(pool, List.copyOf(nodes));
        }
        republishLost();
    }

    private synchronized void republishLost() {
        List<MultiGauge.Row<?>> volumes = new ArrayList<>();
        List<MultiGauge.Row<?>> bytes = new ArrayList<>();
        lost.forEach((pool, nodes) -> nodes.forEach(n -> {
            Tags tags = Tags.of("pool", pool, "node", n.getNode(), "reason", n.getReason());
            volumes.add(MultiGauge.Row.of(tags, n.getVolumes() == null ? 0 : n.getVolumes()));
            bytes.add(MultiGauge.Row.of(tags, n.getVolumeBytes() == null ? 0 : n.getVolumeBytes()));
        }));
        lostVolumes.register(volumes, true);
        lostBytes.register(bytes, true);
    }

    /** Records a reconcile's outcome; problemReason null when it went well. */
    public void record(String pool, Observed observed, String problemReason) {
        if (pools.put(pool, observed) == null) {
            Tags tags = Tags.of("pool", pool);
            gauge("loopcsi.pool.ready", "1 when the StoragePool's Ready condition is True", tags, pool, o -> o.ready() ? 1 : 0);
            gauge("loopcsi.pool.nodes.desired", "Node pods the pool's DaemonSet should run", tags, pool, Observed::nodesDesired);
            gauge("loopcsi.pool.nodes.ready", "Node pods of the pool that are ready", tags, pool, Observed::nodesReady);
            gauge("loopcsi.pool.controller.ready", "1 when the pool's controller Deployment is available", tags, pool,
                    o -> o.controllerReady() ? 1 : 0);
            gauge("loopcsi.pool.reconcile.failing", "1 when the last reconcile of the pool hit a problem (status Degraded or not Ready)",
                    tags, pool, o -> o.failing() ? 1 : 0);
        }
        if (problemReason != null) {
            Counter.builder("loopcsi.pool.reconcile.problems").description("Reconciles of a pool that hit a problem, by reason")
                    .tags("pool", pool, "reason", problemReason).register(registry).increment();
        }
    }

    /** The pool is gone: its series go too. */
    public void forget(String pool) {
        if (lost.remove(pool) != null) {
            republishLost();
        }
        if (orphans.remove(pool) != null) {
            republishOrphans();
        }
        if (pools.remove(pool) != null) {
            registry.getMeters().stream().filter(m -> pool.equals(m.getId().getTag("pool")) && m.getId().getName().startsWith("loopcsi.pool.")
                    && !m.getId().getName().startsWith("loopcsi.pool.lost.") && !m.getId().getName().equals("loopcsi.pool.orphans"))
                    .toList().forEach(registry::remove);
        }
    }

    private void gauge(String name, String help, Tags tags, String pool, java.util.function.ToDoubleFunction<Observed> f) {
        Gauge.builder(name, pools, m -> {
            Observed o = m.get(pool);
            return o == null ? Double.NaN : f.applyAsDouble(o);
        }).description(help).tags(tags).strongReference(true).register(registry);
    }
}
