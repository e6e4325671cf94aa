package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's alerting rules as a Prometheus Operator PrometheusRule (a generic resource: the
 * monitoring.coreos.com CRDs are optional; the operator writes it only where they exist). The
 * driver's series are selected by {@code driver} (the pool's CSI driver name), the operator's by
 * {@code pool}. Each alert's runbook is the section of docs/metrics.md named after it.
 */
public final class PrometheusRuleSpec {

    public static final String GROUP = "monitoring.coreos.com";
    public static final String VERSION = "v1";
    public static final String KIND = "PrometheusRule";
    public static final String CRD = "prometheusrules." + GROUP;
    static final String RUNBOOK = "https://github.com/loopcsi/loopcsi/blob/main/docs/metrics.md#";

    private PrometheusRuleSpec() {
    }

    public static GenericKubernetesResource desired(StoragePool pool, String namespace) {
        return new GenericKubernetesResourceBuilder()
                .withApiVersion(GROUP + "/" + VERSION).withKind(KIND)
                .withNewMetadata().withName(PoolNames.metrics(pool)).withNamespace(namespace).withLabels(PoolNames.labels(pool, "metrics"))
                .endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("groups", groups(pool))))
                .build();
    }

    /** The rule groups: also what a Prometheus rule file holds under {@code groups:}. */
    public static List<Map<String, Object>> groups(StoragePool pool) {
        String d = "driver=\"" + pool.driverName() + "\"";
        String p = "pool=\"" + pool.getMetadata().getName() + "\"";
        List<Map<String, Object>> rules = List.of(
                alert("LoopcsiPoolAlmostFull", "warning", "15m",
                        // charged, not allocated: with thinOvercommit the allocated sizes may pass the capacity on purpose (issue 24)
                        "loopcsi_pool_charged_bytes{" + d + "} / loopcsi_pool_capacity_bytes{" + d + "} > 0.9",
                        "Pool {{ $labels.driver }} is almost fully allocated on node {{ $labels.node }}",
                        "{{ $value | humanizePercentage }} of the pool's capacity on node {{ $labels.node }} is charged to volumes and "
                                + "snapshots (thin volumes at 1/thinOvercommit of their size); new volumes for pods scheduled there "
                                + "will fail with RESOURCE_EXHAUSTED."),
                alert("LoopcsiHostFilesystemOvercommitted", "critical", "5m",
                        "loopcsi_pool_host_promised_bytes{" + d + "} - loopcsi_pool_host_free_bytes{" + d + "} > 0",
                        "Volumes of {{ $labels.driver }} on node {{ $labels.node }} may write more than the host filesystem has left",
                        "The sparse images of pool {{ $labels.driver }} on node {{ $labels.node }} may still grow by "
                                + "{{ $value | humanize1024 }}B more than the host filesystem under the pool has free. When they do, "
                                + "writes inside those volumes fail with I/O errors (data loss). Free space on the host or move volumes."),
                alert("LoopcsiVolumeAbnormal", "critical", "1m", "loopcsi_volumes_abnormal{" + d + "} > 0",
                        "{{ $value }} volume(s) of {{ $labels.driver }} on node {{ $labels.node }} are in an abnormal condition",
                        "The backing image of {{ $value }} volume(s) of pool {{ $labels.driver }} on node {{ $labels.node }} is missing "
                                + "or shorter than the volume; ControllerGetVolume and NodeGetVolumeStats name them."),
                alert("LoopcsiCsiErrors", "warning", "5m",
                        "sum by (driver, instance, method, code) (increase(loopcsi_csi_requests_total{" + d
                                + ",code=~\"INTERNAL|UNKNOWN|DATA_LOSS|UNAVAILABLE|DEADLINE_EXCEEDED\"}[10m])) > 0",
                        "CSI {{ $labels.method }} fails with {{ $labels.code }} on {{ $labels.instance }}",
                        "{{ $value | humanize }} {{ $labels.method }} call(s) of {{ $labels.driver }} on {{ $labels.instance }} "
                                + "ended with {{ $labels.code }} in the last 10 minutes; the driver's log says why."),
                alert("LoopcsiCsiSlowStages", "warning", "10m",
                        "histogram_quantile(0.99, sum by (driver, instance, method, le) (rate(loopcsi_csi_request_duration_seconds_bucket{"
                                + d + ",method=~\"CreateVolume|NodeStageVolume|NodePublishVolume\"}[10m]))) > 30",
                        "CSI {{ $labels.method }} is slow on {{ $labels.instance }}",
                        "The 99th percentile of {{ $labels.method }} of {{ $labels.driver }} on {{ $labels.instance }} is "
                                + "{{ $value | humanizeDuration }}: pods wait that long for their volumes."),
                alert("LoopcsiNodePodsNotReady", "warning", "15m",
                        "loopcsi_pool_nodes_ready{" + p + "} < loopcsi_pool_nodes_desired{" + p + "}",
                        "Pool {{ $labels.pool }} has node pods that are not ready",
                        "Only {{ $value }} of pool {{ $labels.pool }}'s node pods are ready; pods on the other nodes cannot get "
                                + "or mount its volumes (kubectl get storagepool {{ $labels.pool }})."),
                alert("LoopcsiNodeLost", "warning", "5m",
                        "loopcsi_pool_lost_node_volumes{" + p + "} >= 0",
                        "Node {{ $labels.node }} does not serve pool {{ $labels.pool }} ({{ $labels.reason }})",
                        "The node plugin of pool {{ $labels.pool }} on node {{ $labels.node }} has stopped reporting ({{ $labels.reason }});"
                                + " its {{ $value }} volume(s) cannot be staged, expanded or deleted, and pods bound to them stay Pending"
                                + " (kubectl describe storagepool {{ $labels.pool }})."),
                alert("LoopcsiOrphans", "warning", "30m",
                        "loopcsi_pool_orphans{" + p + "} > 0",
                        "Pool {{ $labels.pool }} has {{ $labels.kind }} orphans on node {{ $labels.node }}",
                        "{{ $value }} {{ $labels.kind }} orphan(s) of pool {{ $labels.pool }} on node {{ $labels.node }}: unclaimed are image"
                                + " files no LoopVolume or LoopSnapshot names (they take space and are never deleted by loopcsi), missing"
                                + " are objects whose files are gone (their data is lost), abandoned-transfer are a fetch's partial image"
                                + " into a volume no LoopVolume names (the node deletes it once no LoopTransfer authorises the transfer);"
                                + " kubectl get storagepool {{ $labels.pool }}"
                                + " -o jsonpath='{.status.orphans}' names them."),
                // a fetch under way that received nothing in 10 min (a busy source's 10 min of asking again included)
                alert("LoopcsiTransferStuck", "warning", "1m",
                        // min_over_time: under way for all of the 10 min (the gauge exists at 0 from the node's start)
                        "sum by (driver, node) (min_over_time(loopcsi_transfers_active{" + d + ",direction=\"receive\"}[10m])) > 0 "
                                + "and on (driver, node) "
                                + "sum by (driver, node) (increase(loopcsi_transfer_received_bytes_total{" + d + "}[10m])) == 0",
                        "A transfer onto node {{ $labels.node }} has received nothing for 10 minutes",
                        "Node {{ $labels.node }} of {{ $labels.driver }} is fetching a volume's content from another node and has "
                                + "received no byte for 10 minutes; the claim waits. The LoopVolume's status.transfer names the source "
                                + "node (kubectl get loopvolumes -o yaml)."),
                alert("LoopcsiReconcileFailing", "warning", "15m",
                        "loopcsi_pool_reconcile_failing{" + p + "} == 1",
                        "The operator cannot roll out pool {{ $labels.pool }}",
                        "Reconciling StoragePool {{ $labels.pool }} keeps failing; "
                                + "kubectl describe storagepool {{ $labels.pool }} gives the message."));
        Map<String, Object> group = new LinkedHashMap<>();
        group.put("name", "loopcsi-" + pool.getMetadata().getName());
        group.put("rules", rules);
        return List.of(group);
    }

    private static Map<String, Object> alert(String name, String severity, String forDuration, String expr, String summary,
            String description) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("alert", name);
        r.put("expr", expr);
        r.put("for", forDuration);
        r.put("labels", Map.of("severity", severity));
        r.put("annotations", Map.of("summary", summary, "description", description, "runbook_url", RUNBOOK + name.toLowerCase()));
        return r;
    }
}
