package io.loopcsi.cli.evacuate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.TopologySelectorLabelRequirement;
import io.fabric8.kubernetes.api.model.TopologySelectorTerm;
import io.fabric8.kubernetes.api.model.storage.StorageClass;

/**
 * Whether a node may receive a claim's copy, beyond room and a transfer endpoint: what the
 * scheduler and csi-provisioner would have asked of a node for that claim. An evacuation makes
 * the copy's PV itself (with node affinity to the target), so nothing else applies these rules:
 * <ul>
 * <li>the StorageClass's allowedTopologies: terms ORed, each term's requirements ANDed
 * (TopologySelectorTerm); the driver's key {@value NewObjects#TOPOLOGY_KEY} is the node's name,
 * any other key a label of the Node (kubelet copies the driver's topology onto the Node's labels);
 * <li>the StoragePool's nodeSelector (the nodes that carry the pool);
 * <li>a cordoned node (spec.unschedulable) takes none: the workload could not follow the claim there.
 * </ul>
 * Pure; {@link #whyNot} answers null for an admissible node, else the reason, for the plan.
 */
final class TargetRules {

    private TargetRules() {
    }

    /**
     * @param sc the claim's StorageClass (null: none, or not found: no topology restriction)
     * @param poolSelector the pool's spec.nodeSelector (null or empty: every node)
     * @param node the Node object of target (null when the cluster has none of that name)
     */
    static String whyNot(String target, Node node, StorageClass sc, Map<String, String> poolSelector) {
        Map<String, String> labels = node == null || node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        if (poolSelector != null && !poolSelector.isEmpty()) {
            if (node == null) {
                return "no Node object of that name (the pool's nodeSelector cannot be checked)";
            }
            List<String> missing = new ArrayList<>();
            poolSelector.forEach((k, v) -> {
                if (!Objects.equals(labels.get(k), v)) {
                    missing.add(k + "=" + v);
                }
            });
            if (!missing.isEmpty()) {
                return "outside the pool's nodeSelector (lacks " + String.join(", ", missing) + ")";
            }
        }
        if (node != null && node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable())) {
            return "cordoned (spec.unschedulable)";
        }
        List<TopologySelectorTerm> terms = sc == null || sc.getAllowedTopologies() == null ? List.of() : sc.getAllowedTopologies();
        if (terms.isEmpty()) {
            return null;
        }
        for (TopologySelectorTerm t : terms) {
            if (satisfies(target, labels, t)) {
                return null;
            }
        }
        return "outside the allowedTopologies of StorageClass " + sc.getMetadata().getName();
    }

    private static boolean satisfies(String target, Map<String, String> labels, TopologySelectorTerm term) {
        List<TopologySelectorLabelRequirement> reqs = term.getMatchLabelExpressions() == null ? List.of() : term.getMatchLabelExpressions();
        for (TopologySelectorLabelRequirement r : reqs) {
            String value = NewObjects.TOPOLOGY_KEY.equals(r.getKey()) ? target : labels.get(r.getKey());
            if (value == null || r.getValues() == null || !r.getValues().contains(value)) {
                return false;
            }
        }
        return true;
    }
}
