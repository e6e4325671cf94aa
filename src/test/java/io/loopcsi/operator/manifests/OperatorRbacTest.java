package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.loopcsi.operator.desired.CsiRbac;

/**
 * Kubernetes lets the operator grant only what it holds itself (RBAC escalation prevention, no
 * "escalate" verb given to it): its generated ClusterRole must cover every rule of CsiRbac.
 */
class OperatorRbacTest {

    @Test
    void theOperatorHoldsEveryRuleItGrantsToAPoolsComponents() throws IOException {
        List<PolicyRule> held = operatorRules();
        List<PolicyRule> granted = new ArrayList<>();
        granted.addAll(CsiRbac.CONTROLLER_CLUSTER_RULES);
        granted.addAll(CsiRbac.CONTROLLER_NAMESPACE_RULES);
        granted.addAll(CsiRbac.NODE_CLUSTER_RULES);
        List<String> missing = new ArrayList<>();
        for (PolicyRule g : granted) {
            for (String group : g.getApiGroups()) {
                for (String res : g.getResources()) {
                    for (String verb : g.getVerbs()) {
                        boolean ok = held.stream().anyMatch(h -> h.getApiGroups().contains(group) && h.getResources().contains(res)
                                && (h.getVerbs().contains(verb) || h.getVerbs().contains("*")));
                        if (!ok) {
                            missing.add(group + "/" + res + ":" + verb);
                        }
                    }
                }
            }
        }
        assertTrue(missing.isEmpty(), "add @RBACRule for these to StoragePoolReconciler, then `make manifests`: " + missing);
    }

    @SuppressWarnings("unchecked")
    static List<PolicyRule> operatorRules() throws IOException {
        List<HasMetadata> docs = (List<HasMetadata>) (Object) Serialization.unmarshal(Files.readString(Path.of("kubernetes/rbac.yaml")));
        List<PolicyRule> rules = new ArrayList<>();
        for (HasMetadata d : docs) {
            if (d instanceof ClusterRole cr) {
                rules.addAll(cr.getRules());
            }
        }
        return rules;
    }
}
