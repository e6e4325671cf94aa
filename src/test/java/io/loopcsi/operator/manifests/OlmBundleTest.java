package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.loopcsi.operator.api.Images;

/**
 * What OLM checks in the committed CSV (olm-bundle/) that needs no API server, and what this
 * project promises of it: the install strategy is kubernetes/'s operator with kubernetes/'s RBAC,
 * the deployment's selector matches its pods, the install modes fit a cluster-scoped operator,
 * every image is a related image, and the version scheme lets the next version upgrade this one.
 * OlmBundleKubeTest checks the rest against OLM's CRDs on a real API server.
 */
class OlmBundleTest {

    static final Path CSV_FILE = Path.of("olm-bundle/manifests/loopcsi.clusterserviceversion.yaml");
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final ObjectMapper JSON = new ObjectMapper();
    static JsonNode csv;

    @BeforeAll
    static void read() throws IOException {
        csv = YAML.readTree(CSV_FILE.toFile());
    }

    /** The rules of the CSV's clusterPermissions (OLM makes one ClusterRole of each entry). */
    static List<PolicyRule> clusterRules(JsonNode csv) {
        List<PolicyRule> rules = new ArrayList<>();
        csv.at("/spec/install/spec/clusterPermissions").forEach(p -> p.get("rules").forEach(r -> rules.add(JSON.convertValue(r, PolicyRule.class))));
        return rules;
    }

    @Test
    void theInstallStrategyIsTheOperatorOfKubernetesDirectory() throws IOException {
        assertEquals("deployment", csv.at("/spec/install/strategy").asText());
        JsonNode deployments = csv.at("/spec/install/spec/deployments");
        assertEquals(1, deployments.size());
        JsonNode install = OlmBundle.ofKind(OlmBundle.yamlDocs(Files.readString(Path.of("kubernetes/operator.yaml"))), "Deployment");
        assertEquals(install.at("/metadata/name"), deployments.at("/0/name"));
        assertEquals(install.get("spec"), deployments.at("/0/spec"), "the CSV's Deployment is kubernetes/operator.yaml's");
    }

    @Test
    void theDeploymentsSelectorMatchesItsPodsWhoseServiceAccountHasThePermissions() {
        Set<String> accounts = new HashSet<>();
        csv.at("/spec/install/spec/clusterPermissions").forEach(p -> accounts.add(p.get("serviceAccountName").asText()));
        csv.at("/spec/install/spec/permissions").forEach(p -> accounts.add(p.get("serviceAccountName").asText()));
        for (JsonNode d : csv.at("/spec/install/spec/deployments")) {
            JsonNode labels = d.at("/spec/template/metadata/labels");
            assertTrue(d.at("/spec/selector/matchLabels").size() > 0);
            d.at("/spec/selector/matchLabels").fields()
                    .forEachRemaining(l -> assertEquals(l.getValue().asText(), labels.path(l.getKey()).asText(), "selector " + l.getKey()));
            assertTrue(accounts.contains(d.at("/spec/template/spec/serviceAccountName").asText()), "the pod's ServiceAccount gets permissions");
        }
    }

    @Test
    void thePermissionsAreKubernetesDirectorysRbacAndCoverWhatTheOperatorGrants() throws IOException {
        List<PolicyRule> csvRules = clusterRules(csv);
        List<PolicyRule> rbacYaml = RbacCoverage.operatorRules();
        assertEquals(List.of(), RbacCoverage.missing(csvRules, rbacYaml), "the CSV holds all of kubernetes/rbac.yaml");
        assertEquals(List.of(), RbacCoverage.missing(rbacYaml, csvRules), "and no more");
        assertEquals(List.of(), RbacCoverage.missing(csvRules, RbacCoverage.grantedToPools()), "what the operator grants to pools");
        assertTrue(csv.at("/spec/install/spec/permissions").isMissingNode() || csv.at("/spec/install/spec/permissions").isEmpty(),
                "no namespaced permissions: kubernetes/ has none");
    }

    @Test
    void onlyAllNamespacesIsSupported() {
        Map<String, Boolean> modes = new TreeMap<>();
        csv.at("/spec/installModes").forEach(m -> modes.put(m.get("type").asText(), m.get("supported").asBoolean()));
        assertEquals(Map.of("AllNamespaces", true, "OwnNamespace", false, "SingleNamespace", false, "MultiNamespace", false), modes);
    }

    @Test
    void relatedImagesListEveryImageTheOperatorAndItsPoolsRun() throws IllegalAccessException {
        Set<String> related = new HashSet<>();
        Set<String> names = new HashSet<>();
        csv.at("/spec/relatedImages").forEach(i -> {
            related.add(i.get("image").asText());
            assertTrue(names.add(i.get("name").asText()), "unique name " + i);
        });
        List<String> images = new ArrayList<>();
        csv.at("/spec/install/spec/deployments").forEach(d -> d.at("/spec/template/spec/containers").forEach(c -> images.add(c.get("image").asText())));
        for (Field f : Images.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                images.add((String) f.get(null));
            }
        }
        assertTrue(images.size() >= 6, images.toString());
        assertTrue(related.containsAll(images), "relatedImages " + related + " lists every image: " + images);
        assertEquals(images.get(0), csv.at("/metadata/annotations/containerImage").asText());
    }

    @Test
    void theVersionSchemeLetsTheNextVersionUpgradeThisOne() {
        String version = csv.at("/spec/version").asText();
        assertEquals("loopcsi.v" + version, csv.at("/metadata/name").asText());
        assertEquals(">=0.0.0 <" + version, csv.at("/metadata/annotations/olm.skipRange").asText(), "every earlier version upgrades to this one");
        JsonNode replaces = csv.at("/spec/replaces");
        if (!replaces.isMissingNode()) {
            String previous = replaces.asText().replaceFirst("^loopcsi\\.v", "");
            assertTrue(compare(previous, version) < 0, "replaces an earlier version: " + replaces);
        }
        assertEquals("alpha", csv.at("/spec/maturity").asText());
        assertEquals("1.20.0", csv.at("/spec/minKubeVersion").asText());
    }

    /** OLM installs the CSV only where every nativeAPIs entry is served: only Kubernetes' own APIs may be listed. */
    @Test
    void nativeApisAreOnlyKubernetesOwnAndAnOptionalCrdApiIsDropped() throws IOException {
        assertTrue(csv.at("/spec/nativeAPIs").size() > 0);
        csv.at("/spec/nativeAPIs").forEach(a -> assertTrue(OlmBundle.BUILT_IN_GROUPS.contains(a.path("group").asText()), a.toString()));
        com.fasterxml.jackson.databind.node.ArrayNode apis = (com.fasterxml.jackson.databind.node.ArrayNode) JSON.readTree("""
                [{"group": "storage.k8s.io", "version": "v1", "kind": "CSIDriver"},
                 {"group": "snapshot.storage.k8s.io", "version": "v1", "kind": "VolumeSnapshotClass"},
                 {"group": "", "version": "v1", "kind": "Service"}]""");
        assertEquals(List.of("CSIDriver", "Service"), OlmBundle.builtIn(apis).findValuesAsText("kind"));
    }

    @Test
    void descriptorsNameFieldsInWords() {
        assertEquals("Capacity Per Node", OlmBundle.words("capacityPerNode"));
        assertEquals("urn:alm:descriptor:com.tectonic.ui:number", OlmBundle.xDescriptor("integer", true));
        assertEquals("urn:alm:descriptor:text", OlmBundle.xDescriptor("boolean", false));
    }

    /** Compares dotted numeric versions (0.1.0 < 0.10.0). */
    static int compare(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int c = Integer.compare(i < x.length ? Integer.parseInt(x[i]) : 0, i < y.length ? Integer.parseInt(y[i]) : 0);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }
}
