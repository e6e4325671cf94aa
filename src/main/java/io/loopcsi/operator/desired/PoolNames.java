package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.Map;

import io.loopcsi.operator.api.StoragePool;

/**
 * Names and labels of everything a pool owns. Names are derived from the pool name only, so a
 * retried reconcile finds the same objects; labels let the operator's informers watch only
 * what it made ({@link #MANAGED_SELECTOR}).
 */
public final class PoolNames {

    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String MANAGER = "loopcsi-operator";
    /** Label selector of every object the operator creates; its informers watch only these. */
    public static final String MANAGED_SELECTOR = MANAGED_BY + "=" + MANAGER;
    public static final String NAME = "app.kubernetes.io/name";
    public static final String INSTANCE = "app.kubernetes.io/instance";
    public static final String COMPONENT = "app.kubernetes.io/component";
    public static final String POOL = "loopcsi.io/pool";

    private PoolNames() {
    }

    /** Prefix of the pool's namespaced objects and cluster roles: loopcsi-POOL. */
    public static String base(StoragePool pool) {
        return "loopcsi-" + pool.getMetadata().getName();
    }

    public static String controller(StoragePool pool) {
        return base(pool) + "-controller";
    }

    public static String node(StoragePool pool) {
        return base(pool) + "-node";
    }

    public static String metrics(StoragePool pool) {
        return base(pool) + "-metrics";
    }

    /** The ConfigMap with the pool's Grafana dashboard. */
    public static String dashboard(StoragePool pool) {
        return base(pool) + "-dashboard";
    }

    /** Labels every owned object carries. */
    public static Map<String, String> labels(StoragePool pool) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(NAME, "loopcsi");
        l.put(INSTANCE, pool.getMetadata().getName());
        l.put(MANAGED_BY, MANAGER);
        l.put(POOL, pool.getMetadata().getName());
        return l;
    }

    /** Labels of one component (controller, node): also the pod selector of its workload. */
    public static Map<String, String> labels(StoragePool pool, String component) {
        Map<String, String> l = labels(pool);
        l.put(COMPONENT, component);
        return l;
    }

    /** The pod selector of a component: stable across operator versions (a selector is immutable). */
    public static Map<String, String> selector(StoragePool pool, String component) {
        return Map.of(INSTANCE, pool.getMetadata().getName(), NAME, "loopcsi", COMPONENT, component);
    }
}
