package io.loopcsi.operator.manifests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.loopcsi.operator.desired.CsiRbac;

/** Whether a set of RBAC rules holds every permission of another (group/resource:verb, "*" verbs count). */
public final class RbacCoverage {

    private RbacCoverage() {
    }

    /** The permissions of {@code needed} that {@code held} does not grant, as group/resource:verb. */
    public static List<String> missing(List<PolicyRule> held, List<PolicyRule> needed) {
        List<String> missing = new ArrayList<>();
        for (PolicyRule g : needed) {
            for (String group : g.getApiGroups()) {
                for (String res : g.getResources()) {
                    for (String verb : g.getVerbs()) {
                        boolean ok = held.stream().anyMatch(h -> h.getApiGroups().contains(group) && h.getResources().contains(res)
                                && (h.getVerbs().contains(verb) || h.getVerbs().contains("*")) && namesCovered(h, g));
                        if (!ok) {
                            missing.add(group + "/" + res + ":" + verb);
                        }
                    }
                }
            }
        }
        return missing;
    }

    /** A held rule limited to some names covers only a needed rule limited to names among them. */
    private static boolean namesCovered(PolicyRule held, PolicyRule needed) {
        List<String> h = held.getResourceNames() == null ? List.of() : held.getResourceNames();
        List<String> n = needed.getResourceNames() == null ? List.of() : needed.getResourceNames();
        return h.isEmpty() || (!n.isEmpty() && h.containsAll(n));
    }

    /** Every rule the operator grants to a pool's components, which it must hold itself (RBAC escalation prevention). */
    public static List<PolicyRule> grantedToPools() {
        List<PolicyRule> granted = new ArrayList<>();
        granted.addAll(CsiRbac.CONTROLLER_CLUSTER_RULES);
        granted.addAll(CsiRbac.CONTROLLER_NAMESPACE_RULES);
        granted.addAll(CsiRbac.NODE_CLUSTER_RULES);
        granted.addAll(CsiRbac.NODE_OPENSHIFT_RULES);
        return granted;
    }

    /** The rules of the ClusterRoles of kubernetes/rbac.yaml (the operator's generated RBAC). */
    @SuppressWarnings("unchecked")
    public static List<PolicyRule> operatorRules() throws IOException {
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
