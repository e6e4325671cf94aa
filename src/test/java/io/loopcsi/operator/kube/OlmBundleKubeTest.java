package io.loopcsi.operator.kube;

import static io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.operator.api.StoragePool;

/**
 * The OLM bundle (olm-bundle/) against OLM's own definitions on a real API server: OLM v0.25's
 * CRDs are installed, the README's "Install through OLM" commands apply the bundle with an
 * OperatorGroup (server-side, so the API server checks the CSV against OLM's schema), then this
 * checks what OLM checks before it installs (owned CRDs present and served, the install mode
 * against the OperatorGroup; OlmBundleTest checks the rest without a server) and that the
 * alm-examples are valid StoragePools. Last it does OLM's install step by hand (the CSV's
 * ServiceAccount, clusterPermissions and Deployment) and runs that operator in this JVM as the
 * CSV's ServiceAccount: it must reconcile the CSV's own example pool with exactly that RBAC.
 * (OLM's operators themselves cannot run here: no images.)
 *
 * <p>Runs when LOOPCSI_KUBE_TEST=1 and KUBECONFIG point at a throw-away cluster, like
 * StoragePoolOperatorKubeTest; OLM's CRDs come from ../shared/data/olm-crds.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OlmBundleKubeTest {

    /** The README installs into loopcsi-system; this test into its own namespace (the kubernetes/ install test owns that one). */
    static final String README_NS = "loopcsi-system";
    static final String NS = "loopcsi-olm";
    static final Path BUNDLE = Path.of("olm-bundle/manifests");
    static final Path CSV_FILE = BUNDLE.resolve("loopcsi.clusterserviceversion.yaml");
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final ObjectMapper JSON = new ObjectMapper();

    static KubernetesClient admin;
    static JsonNode csv;
    static Operator operator;
    static KubernetesClient asOperator;
    static String previousNamespace;

    @BeforeAll
    static void installOlmsCrdsAndTheBundle() throws IOException {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED OlmBundleKubeTest: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); run `make test-kube`");
        }
        assumeTrue(configured, "no test cluster: set LOOPCSI_KUBE_TEST=1 and KUBECONFIG (make test-kube / .ci/run start kube-testenv)");
        Path olmCrds = Path.of(System.getenv().getOrDefault("LOOPCSI_OLM_CRDS", "../shared/data/olm-crds"));
        assertTrue(Files.isDirectory(olmCrds), "OLM's CRDs are expected in " + olmCrds + " (shared/data beside the clone)");
        admin = new KubernetesClientBuilder().build();
        Kubectl.ok("apply", "--server-side", "-f", olmCrds.toString());
        for (String crd : List.of("clusterserviceversions.operators.coreos.com", "operatorgroups.operators.coreos.com")) {
            await(crd + " established", () -> established(crd));
        }
        for (List<String> command : readmeCommands()) {
            Kubectl.ok(command.toArray(String[]::new));
        }
        csv = YAML.readTree(CSV_FILE.toFile());
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.stop();
        }
        if (asOperator != null) {
            asOperator.close();
        }
        if (previousNamespace != null) {
            System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, previousNamespace);
        } else {
            System.clearProperty(OperatorSettings.NAMESPACE_PROPERTY);
        }
        if (admin != null) {
            admin.close();
        }
    }

    @Test
    @Order(1)
    void theApiServerAcceptedTheCsvAndChecksItAgainstOlmsSchema() throws Exception {
        String name = csv.at("/metadata/name").asText();
        JsonNode stored = JSON.readTree(Kubectl.ok("get", "clusterserviceversion", name, "-n", NS, "-o", "json"));
        // a structural schema prunes what it does not know, silently: every field must have survived
        assertEquals(csv.get("spec"), stored.get("spec"), "OLM's schema kept the whole spec");
        assertEquals(csv.at("/metadata/annotations"), stored.at("/metadata/annotations"), "and every annotation");
        // the check is real: a CSV without a required field is refused, naming the field
        ObjectNode broken = csv.deepCopy();
        ((ObjectNode) broken.get("spec")).remove("displayName");
        ((ObjectNode) broken.get("metadata")).put("name", "broken.v0.0.1");
        Path f = Files.createTempFile("broken-csv", ".yaml");
        Kubectl.Result r;
        try {
            Files.writeString(f, YAML.writeValueAsString(broken));
            r = Kubectl.run("apply", "--server-side", "--dry-run=server", "-n", NS, "-f", f.toString());
        } finally {
            Files.delete(f);
        }
        assertNotEquals(0, r.exit(), "a CSV without spec.displayName must be refused: " + r.out());
        assertTrue(r.out().contains("displayName"), r.out());
    }

    @Test
    @Order(2)
    void everyOwnedCrdIsInTheBundleAndServed() throws IOException {
        Set<String> inBundle = new HashSet<>();
        try (var files = Files.list(BUNDLE)) {
            for (Path f : files.toList()) {
                JsonNode doc = YAML.readTree(f.toFile());
                if ("CustomResourceDefinition".equals(doc.path("kind").asText())) {
                    inBundle.add(doc.at("/metadata/name").asText());
                }
            }
        }
        JsonNode owned = csv.at("/spec/customresourcedefinitions/owned");
        assertTrue(owned.size() > 0);
        Set<String> ownedNames = new TreeSet<>();
        for (JsonNode o : owned) {
            String crd = o.get("name").asText();
            ownedNames.add(crd);
            assertTrue(inBundle.contains(crd), crd + " is owned but not in " + BUNDLE);
            await(crd + " established", () -> established(crd));
            var served = admin.apiextensions().v1().customResourceDefinitions().withName(crd).get().getSpec().getVersions().stream()
                    .filter(v -> v.getName().equals(o.get("version").asText())).findFirst().orElseThrow();
            assertTrue(served.getServed(), crd + " " + o.get("version").asText() + " served");
            assertFalse(o.path("displayName").asText().isBlank() || o.path("description").asText().isBlank(), crd + " described");
            assertTrue(o.get("specDescriptors").size() > 0 && o.get("statusDescriptors").size() > 0, crd + " has descriptors");
        }
        assertEquals(inBundle, ownedNames, "every CRD of the bundle is owned by the CSV");
        String internal = csv.at("/metadata/annotations").path("operators.operatorframework.io/internal-objects").asText("[]");
        for (JsonNode i : JSON.readTree(internal)) {
            assertTrue(ownedNames.contains(i.asText()), "internal object " + i + " is an owned CRD");
        }
    }

    @Test
    @Order(3)
    void theInstallModeFitsAnAllNamespacesOperatorGroup() {
        boolean allNamespaces = false;
        for (JsonNode m : csv.at("/spec/installModes")) {
            allNamespaces |= m.get("type").asText().equals("AllNamespaces") && m.get("supported").asBoolean();
        }
        assertTrue(allNamespaces, "the CSV supports AllNamespaces");
        var groups = admin.genericKubernetesResources("operators.coreos.com/v1", "OperatorGroup").inNamespace(NS).list().getItems();
        assertEquals(1, groups.size(), "one OperatorGroup in the namespace (OLM refuses to install with two)");
        Map<String, Object> spec = groups.get(0).get("spec");
        assertTrue(spec == null || (spec.get("targetNamespaces") == null && spec.get("selector") == null),
                "the README's OperatorGroup targets all namespaces: " + spec);
    }

    @Test
    @Order(4)
    void almExamplesAreValidStoragePools() throws Exception {
        JsonNode examples = JSON.readTree(csv.at("/metadata/annotations/alm-examples").asText());
        assertTrue(examples.size() > 0);
        for (JsonNode example : examples) {
            Path f = Files.createTempFile("alm-example", ".json");
            try {
                Files.writeString(f, example.toString());
                String out = Kubectl.ok("create", "--dry-run=server", "-f", f.toString());
                assertTrue(out.contains("created (server dry run)"), out);
            } finally {
                Files.delete(f);
            }
        }
    }

    @Test
    @Order(5)
    void installedAsOlmWouldTheOperatorReconcilesTheCsvsExamplePool() throws Exception {
        String sa = csv.at("/spec/install/spec/clusterPermissions/0/serviceAccountName").asText();
        String csvName = csv.at("/metadata/name").asText();
        // OLM's install step: the ServiceAccount, a ClusterRole + binding per clusterPermissions entry, the Deployment
        admin.serviceAccounts().inNamespace(NS).resource(new ServiceAccountBuilder().withNewMetadata().withName(sa).endMetadata().build())
                .serverSideApply();
        admin.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName(csvName + "-" + sa).endMetadata()
                .withRules(clusterRules()).build()).serverSideApply();
        admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(csvName + "-" + sa).endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", csvName + "-" + sa)
                .addNewSubject().withKind("ServiceAccount").withName(sa).withNamespace(NS).endSubject().build()).serverSideApply();
        JsonNode d = csv.at("/spec/install/spec/deployments/0");
        Map<String, String> labels = JSON.convertValue(d.get("label"), new TypeReference<Map<String, String>>() {
        });
        admin.apps().deployments().inNamespace(NS).resource(new DeploymentBuilder().withNewMetadata().withName(d.get("name").asText())
                .withLabels(labels).endMetadata()
                .withSpec(JSON.convertValue(d.get("spec"), DeploymentSpec.class)).build()).serverSideApply();
        assertNotNull(await("the operator Deployment", () -> admin.apps().deployments().inNamespace(NS).withName(d.get("name").asText()).get()));

        // no kubelet runs it here: run that operator in this JVM, as its ServiceAccount, with its namespace
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername("system:serviceaccount:" + NS + ":" + sa);
        asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        previousNamespace = System.getProperty(OperatorSettings.NAMESPACE_PROPERTY);
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
        operator.register(new StoragePoolReconciler());
        operator.start();

        JsonNode example = JSON.readTree(csv.at("/metadata/annotations/alm-examples").asText()).get(0);
        String pool = example.at("/metadata/name").asText();
        await("no objects left of an earlier pool " + pool, () -> leftovers(pool).isEmpty());
        Kubectl.apply(example.toString());
        try {
            await("the example pool reconciled", () -> {
                StoragePool p = admin.resources(StoragePool.class).withName(pool).get();
                return p.getStatus() != null && Long.valueOf(1).equals(p.getStatus().getObservedGeneration()) ? p : null;
            });
            String driver = admin.resources(StoragePool.class).withName(pool).get().driverName();
            await("its CSIDriver", () -> admin.storage().v1().csiDrivers().withName(driver).get());
            await("its controller in the operator's namespace",
                    () -> admin.apps().deployments().inNamespace(NS).withName("loopcsi-" + pool + "-controller").get());
            await("its node DaemonSet", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-" + pool + "-node").get());
        } finally {
            // leave the cluster to the other tests: the operator lifts its finalizer, garbage collection does the rest
            Kubectl.ok("delete", "storagepool", pool, "--wait=false");
            await("the example pool deleted", () -> admin.resources(StoragePool.class).withName(pool).get() == null);
            await("its cluster-scoped objects collected", () -> leftovers(pool).isEmpty());
        }
    }

    /** The README's "Install through OLM" kubectl commands (the registry-less ones), in this test's namespace. */
    static List<List<String>> readmeCommands() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("### Install through OLM");
        assertTrue(start >= 0, "README has an \"Install through OLM\" section");
        int end = readme.indexOf("\n#", start + 10);
        List<List<String>> commands = new ArrayList<>();
        for (String line : readme.substring(start, end < 0 ? readme.length() : end).split("\n")) {
            if (line.startsWith("kubectl ") && !line.startsWith("kubectl get")) {
                String command = line.replaceFirst("\\s+#.*$", "").replace(README_NS, NS);
                commands.add(List.of(command.substring("kubectl ".length()).trim().split("\\s+")));
            }
        }
        assertEquals(3, commands.size(), "namespace, OperatorGroup, bundle: " + commands);
        return commands;
    }

    /** Cluster-scoped objects still owned by a pool of that name (another test's pool has the same name). */
    static List<String> leftovers(String pool) {
        List<io.fabric8.kubernetes.api.model.HasMetadata> all = new ArrayList<>();
        all.addAll(admin.storage().v1().csiDrivers().list().getItems());
        all.addAll(admin.storage().v1().storageClasses().list().getItems());
        all.addAll(admin.rbac().clusterRoles().list().getItems());
        all.addAll(admin.rbac().clusterRoleBindings().list().getItems());
        return all.stream().filter(o -> o.getMetadata().getOwnerReferences() != null && o.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> r.getKind().equals("StoragePool") && r.getName().equals(pool)))
                .map(o -> o.getKind() + " " + o.getMetadata().getName()).toList();
    }

    static List<PolicyRule> clusterRules() {
        List<PolicyRule> rules = new ArrayList<>();
        csv.at("/spec/install/spec/clusterPermissions").forEach(p -> p.get("rules").forEach(r -> rules.add(JSON.convertValue(r, PolicyRule.class))));
        return rules;
    }

    static boolean established(String crd) {
        var c = admin.apiextensions().v1().customResourceDefinitions().withName(crd).get();
        return c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
                .anyMatch(x -> x.getType().equals("Established") && x.getStatus().equals("True"));
    }
}
