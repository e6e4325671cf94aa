package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.rbac.PolicyRule;

/**
 * kubernetes/olm/operator-rbac.yaml grants the ServiceAccount the CSV names exactly the CSV's
 * rules, where OLM's permission check looks for them (requirements.go permissionStatus, with
 * rule_checker.go): {@code clusterPermissions} through ClusterRoleBindings, {@code permissions}
 * through RoleBindings in the install namespace, the account itself as the subject.
 */
class OlmInstallObjectsTest {

    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theCommittedRbacGrantsTheCsvsAccountExactlyTheCsvsRules() throws IOException {
        JsonNode csv = OlmBundle.YAML.readTree(OlmBundleTest.CSV_FILE.toFile());
        String namespace = csv.at("/metadata/annotations/operatorframework.io~1suggested-namespace").asText();
        List<ObjectNode> objects = OlmBundle.yamlDocs(Files.readString(Path.of(OlmInstallObjects.FILE)));
        for (String account : accounts(csv)) {
            assertTrue(objects.stream().anyMatch(o -> o.path("kind").asText().equals("ServiceAccount")
                    && o.at("/metadata/name").asText().equals(account) && o.at("/metadata/namespace").asText().equals(namespace)),
                    "ServiceAccount " + account + " in " + namespace);
            for (boolean cluster : List.of(true, false)) {
                List<PolicyRule> wanted = rulesOfCsv(csv, cluster ? "clusterPermissions" : "permissions", account);
                List<PolicyRule> granted = granted(objects, account, namespace, cluster);
                String where = (cluster ? "cluster-wide" : "in " + namespace) + " to " + account;
                assertEquals(List.of(), RbacCoverage.missing(granted, wanted), "every CSV rule granted " + where);
                assertEquals(List.of(), RbacCoverage.missing(wanted, granted), "and nothing more " + where);
            }
        }
        assertFalse(rulesOfCsv(csv, "clusterPermissions", "loopcsi-operator").isEmpty(), "the CSV has cluster rules to check");
    }

    @Test
    void namespacedPermissionsBecomeRolesInTheNamespaceAndEveryEntryGetsItsOwnRole() {
        ObjectNode csv = JSON.createObjectNode();
        csv.putObject("metadata").put("name", "x.v1.0.0");
        ObjectNode spec = csv.putObject("spec").putObject("install").putObject("spec");
        ArrayNode perms = spec.putArray("permissions");
        perms.addObject().put("serviceAccountName", "op").putArray("rules").addObject().putArray("verbs").add("get");
        ArrayNode cluster = spec.putArray("clusterPermissions");
        cluster.addObject().put("serviceAccountName", "op").putArray("rules").addObject().putArray("verbs").add("list");
        cluster.addObject().put("serviceAccountName", "op").putArray("rules").addObject().putArray("verbs").add("watch");

        Map<String, String> names = new TreeMap<>();
        for (ObjectNode o : OlmInstallObjects.of(csv, "ns")) {
            String key = o.get("kind").asText() + " " + o.at("/metadata/name").asText();
            assertEquals(null, names.put(key, o.at("/metadata/namespace").asText("")), "one " + key);
        }
        assertEquals(Map.of("ServiceAccount op", "ns", "Role x.v1.0.0-op", "ns", "RoleBinding x.v1.0.0-op", "ns",
                "ClusterRole x.v1.0.0-op", "", "ClusterRoleBinding x.v1.0.0-op", "",
                "ClusterRole x.v1.0.0-op-2", "", "ClusterRoleBinding x.v1.0.0-op-2", ""), names);
    }

    static List<String> accounts(JsonNode csv) {
        List<String> out = new ArrayList<>();
        for (String kind : List.of("permissions", "clusterPermissions")) {
            csv.at("/spec/install/spec/" + kind).forEach(p -> {
                if (!out.contains(p.get("serviceAccountName").asText())) {
                    out.add(p.get("serviceAccountName").asText());
                }
            });
        }
        return out;
    }

    static List<PolicyRule> rulesOfCsv(JsonNode csv, String kind, String account) {
        List<PolicyRule> rules = new ArrayList<>();
        csv.at("/spec/install/spec/" + kind).forEach(p -> {
            if (p.get("serviceAccountName").asText().equals(account)) {
                p.get("rules").forEach(r -> rules.add(JSON.convertValue(r, PolicyRule.class)));
            }
        });
        return rules;
    }

    /** The rules the objects grant the account: cluster-wide (ClusterRoleBindings) or in the namespace (RoleBindings of Roles there). */
    static List<PolicyRule> granted(List<ObjectNode> objects, String account, String namespace, boolean cluster) {
        List<PolicyRule> rules = new ArrayList<>();
        for (ObjectNode b : objects) {
            boolean applies = cluster ? b.path("kind").asText().equals("ClusterRoleBinding")
                    : b.path("kind").asText().equals("RoleBinding") && b.at("/metadata/namespace").asText().equals(namespace);
            boolean toAccount = false;
            for (JsonNode s : b.path("subjects")) {
                toAccount |= s.path("kind").asText().equals("ServiceAccount") && s.path("name").asText().equals(account)
                        && s.path("namespace").asText().equals(namespace);
            }
            if (!applies || !toAccount) {
                continue;
            }
            String roleKind = b.at("/roleRef/kind").asText();
            for (ObjectNode r : objects) {
                boolean same = r.path("kind").asText().equals(roleKind) && r.at("/metadata/name").asText().equals(b.at("/roleRef/name").asText())
                        && (roleKind.equals("ClusterRole") || r.at("/metadata/namespace").asText().equals(namespace));
                if (same) {
                    r.path("rules").forEach(x -> rules.add(JSON.convertValue(x, PolicyRule.class)));
                }
            }
        }
        return rules;
    }
}
