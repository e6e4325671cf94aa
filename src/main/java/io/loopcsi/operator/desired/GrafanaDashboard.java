package io.loopcsi.operator.desired;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's Grafana dashboard as a ConfigMap for Grafana's dashboard sidecar (kube-prometheus-stack,
 * grafana helm chart: it loads every ConfigMap labelled {@code grafana_dashboard=1}). The dashboard
 * is the committed {@code grafana/loopcsi-dashboard.json} made the pool's own: its uid and title name
 * the pool (Grafana refuses two dashboards with one uid), and its {@code driver} and {@code pool}
 * variables default to this pool, so the ConfigMaps of several pools are several dashboards.
 * Exists only while {@code spec.monitoring.grafanaDashboard} is true.
 */
public final class GrafanaDashboard {

    /** The committed dashboard, on the class path. */
    public static final String RESOURCE = "grafana/loopcsi-dashboard.json";
    /** The label Grafana's dashboard sidecar looks for (its default), and its value. */
    public static final String SIDECAR_LABEL = "grafana_dashboard";
    public static final String SIDECAR_VALUE = "1";
    /** Grafana's limit on a dashboard uid. */
    static final int MAX_UID = 40;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static volatile JsonNode committed;

    private GrafanaDashboard() {
    }

    /** Whether the pool asks for its dashboard. */
    public static boolean wanted(StoragePool pool) {
        return pool.getSpec() != null && pool.getSpec().getMonitoring() != null && pool.getSpec().getMonitoring().isGrafanaDashboard();
    }

    /** The ConfigMap: one key, {@code loopcsi-POOL.json}, holding {@link #forPool} of {@code dashboard} (left unchanged). */
    public static ConfigMap desired(StoragePool pool, String namespace, JsonNode dashboard) {
        Map<String, String> labels = PoolNames.labels(pool, "dashboard");
        labels.put(SIDECAR_LABEL, SIDECAR_VALUE);
        String json;
        try {
            json = JSON.writerWithDefaultPrettyPrinter().writeValueAsString(forPool(pool, dashboard));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ConfigMapBuilder()
                .withNewMetadata().withName(PoolNames.dashboard(pool)).withNamespace(namespace).withLabels(labels).endMetadata()
                .withData(Map.of(dataKey(pool), json))
                .build();
    }

    /** The data key: the sidecar writes it as a file and Grafana loads files ending in .json. */
    public static String dataKey(StoragePool pool) {
        return PoolNames.base(pool) + ".json";
    }

    /** A copy of the dashboard with this pool's uid and title, and its driver and pool variables set to this pool. */
    public static JsonNode forPool(StoragePool pool, JsonNode dashboard) {
        ObjectNode d = dashboard.deepCopy();
        String name = pool.getMetadata().getName();
        d.put("uid", uid(pool));
        d.put("title", d.path("title").asText("loopcsi") + ": " + name);
        d.remove("id");
        for (JsonNode v : d.path("templating").path("list")) {
            String var = v.path("name").asText();
            if (var.equals("driver")) {
                select((ObjectNode) v, pool.driverName());
            } else if (var.equals("pool")) {
                select((ObjectNode) v, name);
            }
        }
        return d;
    }

    /** loopcsi-POOL, or, where that is longer than Grafana allows, a prefix of it and a hash of the pool name. */
    static String uid(StoragePool pool) {
        String uid = PoolNames.base(pool);
        if (uid.length() <= MAX_UID) {
            return uid;
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(pool.getMetadata().getName().getBytes(StandardCharsets.UTF_8));
            String hash = HexFormat.of().formatHex(h, 0, 4);
            return uid.substring(0, MAX_UID - hash.length() - 1) + "-" + hash;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The variable's default: Grafana opens a dashboard with each variable's saved "current" selection. */
    private static void select(ObjectNode variable, String value) {
        ObjectNode current = variable.putObject("current");
        current.put("selected", true);
        if (variable.path("multi").asBoolean(false)) {
            current.putArray("text").add(value);
            current.putArray("value").add(value);
        } else {
            current.put("text", value);
            current.put("value", value);
        }
    }

    /** The committed dashboard (read once from the class path). */
    public static JsonNode committed() {
        JsonNode d = committed;
        if (d == null) {
            try (InputStream in = GrafanaDashboard.class.getClassLoader().getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(RESOURCE + " is not on the class path");
                }
                d = JSON.readTree(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            committed = d;
        }
        return d;
    }
}
