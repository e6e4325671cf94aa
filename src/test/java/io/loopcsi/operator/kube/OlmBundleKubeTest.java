package io.loopcsi.operator.kube;

import static io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.time.Instant;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

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

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.StoragePool;

/**
 * The OLM bundle (olm-bundle/) and the README's OLM recipes against OLM's own definitions on a real
 * API server (OLM v0.25's CRDs installed; OLM's operators cannot run here: no images). The
 * README's "Without a registry" commands run in their order, and before each of them
 * {@link OlmRequirements} (a stand-in for the olm-operator's requirement check, from its source)
 * says what OLM would say: with the CRDs Established but no RBAC, the ServiceAccount NotPresent
 * (what a real olm-operator v0.25 reported for the earlier recipe), and every requirement met
 * before the CSV is applied. The API server checks the CSV, the OperatorGroup, and the registry
 * recipe's CatalogSource and Subscription against OLM's schemas. Then it does the olm-operator's
 * install step by hand (the CSV's Deployment, owned by the CSV) and runs that operator in this JVM
 * as the CSV's ServiceAccount, with exactly the generated RBAC: it must reconcile the CSV's own
 * example pool. Last, an operator upgrade as the README describes it (the old CSV deleted, so
 * garbage collection takes the operator Deployment; the next version's Deployment; a new operator
 * process) while the pool has a volume: nothing the pool owns is deleted, re-created or changed,
 * and the hand-off objects are not touched.
 *
 * <p>Runs when LOOPCSI_KUBE_TEST=1 and KUBECONFIG point at a throw-away cluster with
 * kube-controller-manager, like StoragePoolOperatorKubeTest; OLM's CRDs come from
 * ../shared/data/olm-crds.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OlmBundleKubeTest {

    /** The README installs into loopcsi-system; this test into its own namespace (the kubernetes/ install test owns that one). */
    static final String README_NS = "loopcsi-system";
    static final String NS = "loopcsi-olm";
    static final String RECIPE = "Without a registry, a CSV applied by hand";
    static final Path BUNDLE = Path.of("olm-bundle/manifests");
    static final Path CSV_FILE = BUNDLE.resolve("loopcsi.clusterserviceversion.yaml");
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final ObjectMapper JSON = new ObjectMapper();
    static final String VOLUME_ID = "vol-0123456789abcdef";
    static final String NODE = "node-a";
    static final String PV = "olm-upgrade-pv";

    static KubernetesClient admin;
    static JsonNode csv;
    static Operator operator;
    static KubernetesClient asOperator;
    /** The namespace property before the first operator of this test set it (null: it was unset), restored afterwards. */
    static String previousNamespace;
    static boolean namespaceSet;
    static String pool;
    /** What the pool owned (and its hand-off objects) before the upgrade: "Kind name" → uid, generation. */
    static Map<String, String> beforeUpgrade;

    @BeforeAll
    static void installOlmsCrds() throws IOException {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED OlmBundleKubeTest: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); run `make test-kube`");
        }
        assumeTrue(configured, "no test cluster: set LOOPCSI_KUBE_TEST=1 and KUBECONFIG (make test-kube / .ci/run start kube-testenv)");
        Path olmCrds = Path.of(System.getenv().getOrDefault("LOOPCSI_OLM_CRDS", "../shared/data/olm-crds"));
        assertTrue(Files.isDirectory(olmCrds), "OLM's CRDs are expected in " + olmCrds + " (shared/data beside the clone)");
        admin = new KubernetesClientBuilder().build();
        Kubectl.ok("apply", "--server-side", "-f", olmCrds.toString());
        for (String crd : List.of("clusterserviceversions.operators.coreos.com", "operatorgroups.operators.coreos.com",
                "catalogsources.operators.coreos.com", "subscriptions.operators.coreos.com")) {
            await(crd + " established", () -> established(crd));
        }
        csv = YAML.readTree(CSV_FILE.toFile());
    }

    @AfterAll
    static void stop() {
        stopOperator();
        System.clearProperty(OperatorSettings.RECHECK_PROPERTY);
        if (namespaceSet && previousNamespace != null) {
            System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, previousNamespace);
        } else if (namespaceSet) {
            System.clearProperty(OperatorSettings.NAMESPACE_PROPERTY);
        }
        if (admin != null) {
            if (pool != null && admin.resources(StoragePool.class).withName(pool).get() != null) {
                // a test failed half-way: leave no pool behind for the other tests (its finalizer goes with the operator)
                removeVolumeAndReport();
                Kubectl.run("patch", "storagepool", pool, "--type", "merge", "-p", "{\"metadata\":{\"finalizers\":null}}");
                Kubectl.run("delete", "storagepool", pool, "--ignore-not-found", "--wait=false");
            }
            admin.close();
        }
    }

    @Test
    @Order(1)
    void theReadmeRecipeMeetsEveryRequirementOlmChecksBeforeTheCsvIsApplied() throws Exception {
        List<List<String>> commands = ReadmeRecipe.after(RECIPE);
        List<String> last = commands.get(commands.size() - 1);
        assertEquals(List.of("kubectl", "wait", "-n", README_NS, "--for=jsonpath={.status.phase}=Succeeded",
                "csv/" + csv.at("/metadata/name").asText()), last.subList(0, 6), "the recipe ends waiting for the CSV's Succeeded phase");
        int crds = indexOf(commands, "apply", "kubernetes/crds/");
        int established = indexOf(commands, "wait", "kubernetes/crds/");
        int group = indexOf(commands, "apply", "kubernetes/olm/operatorgroup.yaml");
        int rbac = indexOf(commands, "apply", "kubernetes/olm/operator-rbac.yaml");
        int bundle = indexOf(commands, "apply", "olm-bundle/manifests/");
        assertTrue(crds < established && established < rbac && group < bundle && rbac < bundle && bundle == commands.size() - 2,
                "CRDs, Established, OperatorGroup and RBAC, then the CSV: " + commands);

        for (int i = 0; i < commands.size() - 1; i++) {
            if (i == rbac) {
                List<OlmRequirements.Requirement> r = OlmRequirements.of(admin, csv, NS);
                assertTrue(r.stream().filter(x -> x.kind().equals("CustomResourceDefinition")).allMatch(OlmRequirements.Requirement::met),
                        "the CRDs are Established before the RBAC step: " + r);
                assertEquals(List.of("ServiceAccount " + csv.at("/spec/install/spec/clusterPermissions/0/serviceAccountName").asText() + " NotPresent"),
                        r.stream().filter(x -> !x.met()).map(x -> x.kind() + " " + x.name() + " " + x.status()).toList(),
                        "without the RBAC step OLM would wait for the ServiceAccount, and for nothing else");
            }
            if (i == bundle) {
                List<OlmRequirements.Requirement> r = OlmRequirements.of(admin, csv, NS);
                assertTrue(OlmRequirements.met(r), "everything OLM checks is there before the CSV: " + r);
            }
            run(commands.get(i));
        }
        assertNotNull(admin.genericKubernetesResources("operators.coreos.com/v1alpha1", "ClusterServiceVersion").inNamespace(NS)
                .withName(csv.at("/metadata/name").asText()).get(), "the recipe applied the CSV");
    }

    @Test
    @Order(2)
    void aRuleTheRbacLacksOrABindingToAGroupIsWhatOlmReportsUnsatisfied() throws Exception {
        String role = csv.at("/metadata/name").asText() + "-" + csv.at("/spec/install/spec/clusterPermissions/0/serviceAccountName").asText();
        var clusterRole = admin.rbac().clusterRoles().withName(role).get();
        assertNotNull(clusterRole, "the generated ClusterRole " + role);
        var rules = new ArrayList<>(clusterRole.getRules());
        var dropped = rules.remove(rules.size() - 1);
        clusterRole.setRules(rules);
        clusterRole.getMetadata().setManagedFields(null);
        admin.rbac().clusterRoles().resource(clusterRole).update();
        try {
            List<OlmRequirements.Requirement> r = await("the authorizer sees the narrower role", () -> {
                List<OlmRequirements.Requirement> now = OlmRequirements.of(admin, csv, NS);
                return OlmRequirements.met(now) ? null : now;
            });
            var unmet = r.stream().filter(x -> !x.met()).toList();
            assertEquals(1, unmet.size(), unmet.toString());
            assertEquals("PresentNotSatisfied", unmet.get(0).status());
            String resource = dropped.getApiGroups().get(0) + "/" + dropped.getResources().get(0) + ":" + dropped.getVerbs().get(0);
            assertTrue(unmet.get(0).message().contains(resource), "names the missing " + resource + ": " + unmet.get(0).message());
        } finally {
            run(ReadmeRecipe.after(RECIPE).get(indexOf(ReadmeRecipe.after(RECIPE), "apply", "kubernetes/olm/operator-rbac.yaml")));
        }
        await("the generated RBAC restored", () -> OlmRequirements.met(OlmRequirements.of(admin, csv, NS)));

        // OLM asks for the account without its groups (attributes_util.go toDefaultInfo): a binding to the
        // namespace's service-account group, which the pod's token would carry, does not count
        String binding = role;
        Kubectl.ok("delete", "clusterrolebinding", binding);
        Kubectl.ok("create", "clusterrolebinding", binding, "--clusterrole=" + role, "--group=system:serviceaccounts:" + NS);
        try {
            List<OlmRequirements.Requirement> r = await("the group binding seen", () -> {
                List<OlmRequirements.Requirement> now = OlmRequirements.of(admin, csv, NS);
                return OlmRequirements.met(now) ? null : now;
            });
            assertEquals(List.of("ServiceAccount PresentNotSatisfied"), r.stream().filter(x -> !x.met()).map(x -> x.kind() + " " + x.status()).toList());
        } finally {
            Kubectl.ok("delete", "clusterrolebinding", binding);
            run(ReadmeRecipe.after(RECIPE).get(indexOf(ReadmeRecipe.after(RECIPE), "apply", "kubernetes/olm/operator-rbac.yaml")));
        }
        await("the generated RBAC restored", () -> OlmRequirements.met(OlmRequirements.of(admin, csv, NS)));
    }

    @Test
    @Order(3)
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
    @Order(4)
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
            assertTrue(o.get("specDescriptors").size() > 0, crd + " has spec descriptors");
            // status descriptors where the kind has a status (LoopTransfer, an authorisation, has none)
            var status = served.getSchema().getOpenAPIV3Schema().getProperties().get("status"); // Void: an empty object
            boolean hasStatus = status != null && status.getProperties() != null && !status.getProperties().isEmpty();
            assertEquals(hasStatus, o.path("statusDescriptors").size() > 0, crd + " has status descriptors exactly when it has a status");
        }
        assertEquals(inBundle, ownedNames, "every CRD of the bundle is owned by the CSV");
        String internal = csv.at("/metadata/annotations").path("operators.operatorframework.io/internal-objects").asText("[]");
        for (JsonNode i : JSON.readTree(internal)) {
            assertTrue(ownedNames.contains(i.asText()), "internal object " + i + " is an owned CRD");
        }
    }

    @Test
    @Order(5)
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

    /**
     * The registry recipe's CatalogSource and Subscription are what OLM's CRDs accept (server dry
     * run: no catalog operator here to serve or resolve them), and its commands apply them in the
     * OperatorGroup's namespace before waiting for the InstallPlan and the CSV.
     */
    @Test
    @Order(6)
    void theRegistryRecipesCatalogSourceAndSubscriptionAreValidOlmObjects() throws Exception {
        List<List<String>> commands = ReadmeRecipe.after("With a registry (the OperatorHub way)");
        int group = indexOf(commands, "apply", "kubernetes/olm/operatorgroup.yaml");
        int catalog = indexOf(commands, "apply", "kubernetes/olm/catalog.yaml");
        int approve = indexOf(commands, "patch", "installplan");
        assertTrue(group < catalog && catalog < approve && approve == commands.size() - 2, commands.toString());
        assertTrue(commands.get(commands.size() - 1).contains("--for=jsonpath={.status.phase}=Succeeded"), "ends waiting for the CSV: " + commands);
        run(List.of("kubectl", "apply", "--dry-run=server", "-n", README_NS, "-f", "kubernetes/olm/catalog.yaml"));
        // the check is real: a Subscription without its package is refused
        Kubectl.Result r = Kubectl.tryApply("""
                apiVersion: operators.coreos.com/v1alpha1
                kind: Subscription
                metadata: {name: broken, namespace: %s}
                spec: {source: loopcsi, sourceNamespace: %s}
                """.formatted(NS, NS));
        assertNotEquals(0, r.exit(), r.out());
        assertTrue(r.out().matches("(?s).*(spec\\.name|required field \"name\").*"), "names the missing spec.name: " + r.out());
    }

    @Test
    @Order(7)
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
    @Order(8)
    void installedAsOlmWouldTheOperatorReconcilesTheCsvsExamplePool() throws Exception {
        String sa = csv.at("/spec/install/spec/clusterPermissions/0/serviceAccountName").asText();
        // the olm-operator's install step (the README recipe made the ServiceAccount and RBAC): the CSV's Deployment, owned by the CSV
        var stored = admin.genericKubernetesResources("operators.coreos.com/v1alpha1", "ClusterServiceVersion").inNamespace(NS)
                .withName(csv.at("/metadata/name").asText()).get();
        createOperatorDeployment(csv.at("/spec/install/spec/deployments/0"), new OwnerReferenceBuilder().withApiVersion("operators.coreos.com/v1alpha1")
                .withKind("ClusterServiceVersion").withName(stored.getMetadata().getName()).withUid(stored.getMetadata().getUid())
                .withController(false).withBlockOwnerDeletion(false).build());

        startOperator(sa);
        JsonNode example = JSON.readTree(csv.at("/metadata/annotations/alm-examples").asText()).get(0);
        pool = example.at("/metadata/name").asText();
        await("no objects left of an earlier pool " + pool, () -> leftovers(pool).isEmpty());
        Kubectl.apply(example.toString());
        await("the example pool reconciled", () -> {
            StoragePool p = admin.resources(StoragePool.class).withName(pool).get();
            return p.getStatus() != null && Long.valueOf(1).equals(p.getStatus().getObservedGeneration()) ? p : null;
        });
        String driver = admin.resources(StoragePool.class).withName(pool).get().driverName();
        await("its CSIDriver", () -> admin.storage().v1().csiDrivers().withName(driver).get());
        await("its controller in the operator's namespace", () -> admin.apps().deployments().inNamespace(NS).withName("loopcsi-" + pool + "-controller").get());
        await("its node DaemonSet", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-" + pool + "-node").get());
    }

    @Test
    @Order(9)
    void anUpgradeReplacesTheOperatorAndNothingThePoolOwnsOrItsVolumes() throws Exception {
        assertNotNull(pool, "the example pool of the install test");
        String driver = admin.resources(StoragePool.class).withName(pool).get().driverName();
        String volume = HandoffNames.object(pool, VOLUME_ID);
        // a volume as the pool's controller and node leave it: its LoopVolume (node finalizer, Ready) and its PersistentVolume
        Kubectl.apply(YAML.writeValueAsString(Map.of("apiVersion", "loopcsi.io/v1alpha1", "kind", "LoopVolume",
                "metadata", Map.of("name", volume, "labels", HandoffNames.labels(pool, NODE), "finalizers", List.of(HandoffNames.FINALIZER)),
                "spec", Map.of("pool", pool, "driver", driver, "node", NODE, "name", "pvc-upgrade", "requiredBytes", 1073741824L,
                        "mode", "FILESYSTEM", "fsType", "xfs"))));
        Kubectl.ok("patch", "loopvolume", volume, "--subresource=status", "--type", "merge", "-p",
                "{\"status\":{\"phase\":\"Ready\",\"code\":\"OK\",\"ready\":true,\"capacityBytes\":1073741824,\"observedGeneration\":1}}");
        Kubectl.apply(YAML.writeValueAsString(Map.of("apiVersion", "v1", "kind", "PersistentVolume", "metadata", Map.of("name", PV),
                "spec", Map.of("capacity", Map.of("storage", "1Gi"), "accessModes", List.of("ReadWriteOnce"), "persistentVolumeReclaimPolicy", "Retain",
                        "volumeMode", "Filesystem", "storageClassName", "loopcsi-xfs", "csi", Map.of("driver", driver, "volumeHandle", VOLUME_ID, "fsType", "xfs")))));
        await("the pool counts the volume", () -> Integer.valueOf(1).equals(admin.resources(StoragePool.class).withName(pool).get().getStatus().getVolumes()));
        beforeUpgrade = ownedByThePool();
        String operatorDeployment = csv.at("/spec/install/spec/deployments/0/name").asText();
        assertTrue(beforeUpgrade.keySet().containsAll(List.of("Deployment loopcsi-" + pool + "-controller", "DaemonSet loopcsi-" + pool + "-node",
                "CSIDriver " + driver, "LoopVolume " + volume, "PersistentVolume " + PV)), beforeUpgrade.toString());

        // the README's upgrade without a registry: the old CSV deleted (garbage collection takes its Deployment), the operator process gone
        stopOperator();
        Kubectl.ok("delete", "-n", NS, "clusterserviceversion", csv.at("/metadata/name").asText());
        await("the old operator Deployment collected with its CSV", () -> admin.apps().deployments().inNamespace(NS).withName(operatorDeployment).get() == null);
        // a node reports while no operator runs
        String poolNode = HandoffNames.poolNode(pool, NODE);
        Kubectl.apply(YAML.writeValueAsString(Map.of("apiVersion", "loopcsi.io/v1alpha1", "kind", "LoopPoolNode",
                "metadata", Map.of("name", poolNode, "labels", HandoffNames.labels(pool, NODE)),
                "spec", Map.of("pool", pool, "driver", driver, "node", NODE))));
        Kubectl.ok("patch", "looppoolnode", poolNode, "--subresource=status", "--type", "merge", "-p",
                "{\"status\":{\"totalBytes\":3221225472,\"allocatedBytes\":1073741824,\"availableBytes\":2147483648,\"volumes\":1,\"heartbeatTime\":\""
                        + Instant.now() + "\"}}");
        String reportVersion = admin.resources(LoopPoolNode.class).withName(poolNode).get().getMetadata().getResourceVersion();

        // the next version: its Deployment (another image tag, as OLM applies it) and a new operator process
        ObjectNode next = csv.at("/spec/install/spec/deployments/0").deepCopy();
        ObjectNode container = (ObjectNode) next.at("/spec/template/spec/containers/0");
        container.put("image", container.get("image").asText().replaceFirst(":[^:/]+$", ":0.1.1"));
        createOperatorDeployment(next, null);
        startOperator(csv.at("/spec/install/spec/clusterPermissions/0/serviceAccountName").asText());
        await("the new operator reconciled the pool (its status has the node's report)", () -> {
            var status = admin.resources(StoragePool.class).withName(pool).get().getStatus();
            return status != null && "3Gi".equals(status.getCapacity());
        });

        assertEquals(beforeUpgrade, ownedByThePool(), "every object of the pool and its volume survived unchanged (same uid, same generation/version)");
        assertEquals(reportVersion, admin.resources(LoopPoolNode.class).withName(poolNode).get().getMetadata().getResourceVersion(),
                "the node's report is not the operator's to write");
    }

    @Test
    @Order(10)
    void thePoolGoesAfterItsVolumeAndLeavesNothing() {
        assertNotNull(pool, "the example pool of the install test");
        removeVolumeAndReport();
        // leave the cluster to the other tests: the operator lifts its finalizer, garbage collection does the rest
        Kubectl.ok("delete", "storagepool", pool, "--wait=false");
        await("the example pool deleted", () -> admin.resources(StoragePool.class).withName(pool).get() == null);
        await("its cluster-scoped objects collected", () -> leftovers(pool).isEmpty());
    }

    static void removeVolumeAndReport() {
        Kubectl.ok("delete", "persistentvolume", PV, "--ignore-not-found");
        String volume = HandoffNames.object(pool, VOLUME_ID);
        if (admin.resources(LoopVolume.class).withName(volume).get() != null) {
            Kubectl.ok("patch", "loopvolume", volume, "--type", "merge", "-p", "{\"metadata\":{\"finalizers\":null}}");
        }
        Kubectl.ok("delete", "loopvolume", volume, "--ignore-not-found");
        Kubectl.ok("delete", "looppoolnode", HandoffNames.poolNode(pool, NODE), "--ignore-not-found");
    }

    /** What the olm-operator creates for a CSV deployment entry: the Deployment of that name and labels, in the CSV's namespace. */
    static void createOperatorDeployment(JsonNode d, OwnerReference owner) {
        Map<String, String> labels = JSON.convertValue(d.get("label"), new TypeReference<Map<String, String>>() {
        });
        var meta = new DeploymentBuilder().withNewMetadata().withName(d.get("name").asText()).withLabels(labels);
        if (owner != null) {
            meta.withOwnerReferences(owner);
        }
        admin.apps().deployments().inNamespace(NS).resource(meta.endMetadata()
                .withSpec(JSON.convertValue(d.get("spec"), DeploymentSpec.class)).build()).serverSideApply();
        await("the operator Deployment", () -> admin.apps().deployments().inNamespace(NS).withName(d.get("name").asText()).get());
    }

    /** No kubelet runs the Deployment here: its operator runs in this JVM, as its ServiceAccount, with its namespace. */
    static void startOperator(String sa) {
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername("system:serviceaccount:" + NS + ":" + sa);
        asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        if (!namespaceSet) {
            previousNamespace = System.getProperty(OperatorSettings.NAMESPACE_PROPERTY);
            namespaceSet = true;
        }
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        // a PersistentVolume (what the pool counts) is not watched: the operator sees it at its periodic
        // reconcile, 3 s here instead of 30 s (as in StoragePoolOperatorKubeTest; cleared in stop())
        System.setProperty(OperatorSettings.RECHECK_PROPERTY, StoragePoolOperatorKubeTest.RECHECK);
        operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
        operator.register(new StoragePoolReconciler());
        operator.start();
    }

    static void stopOperator() {
        if (operator != null) {
            operator.stop();
            operator = null;
        }
        if (asOperator != null) {
            asOperator.close();
            asOperator = null;
        }
    }

    /**
     * Every object the pool owns (namespaced ones in the operator's namespace): "Kind name" → uid and
     * generation; and its volume's LoopVolume and PV: uid and resourceVersion (no operator writes them).
     */
    static Map<String, String> ownedByThePool() {
        String uid = admin.resources(StoragePool.class).withName(pool).get().getMetadata().getUid();
        List<HasMetadata> all = new ArrayList<>();
        all.addAll(admin.storage().v1().csiDrivers().list().getItems());
        all.addAll(admin.storage().v1().storageClasses().list().getItems());
        all.addAll(admin.rbac().clusterRoles().list().getItems());
        all.addAll(admin.rbac().clusterRoleBindings().list().getItems());
        all.addAll(admin.apps().deployments().inNamespace(NS).list().getItems());
        all.addAll(admin.apps().daemonSets().inNamespace(NS).list().getItems());
        all.addAll(admin.serviceAccounts().inNamespace(NS).list().getItems());
        all.addAll(admin.services().inNamespace(NS).list().getItems());
        all.addAll(admin.configMaps().inNamespace(NS).list().getItems());
        all.addAll(admin.rbac().roles().inNamespace(NS).list().getItems());
        all.addAll(admin.rbac().roleBindings().inNamespace(NS).list().getItems());
        Map<String, String> out = new TreeMap<>();
        for (HasMetadata o : all) {
            if (o.getMetadata().getOwnerReferences().stream().anyMatch(r -> r.getUid().equals(uid))) {
                out.put(o.getKind() + " " + o.getMetadata().getName(), o.getMetadata().getUid() + " generation " + o.getMetadata().getGeneration());
            }
        }
        for (HasMetadata o : List.<HasMetadata>of(admin.resources(LoopVolume.class).withName(HandoffNames.object(pool, VOLUME_ID)).get(),
                admin.persistentVolumes().withName(PV).get())) {
            out.put(o.getKind() + " " + o.getMetadata().getName(), o.getMetadata().getUid() + " version " + o.getMetadata().getResourceVersion());
        }
        return out;
    }

    /** Runs a README command (kubectl only) in this test's namespace; a file naming the README's namespace is applied from a copy naming this one. */
    static void run(List<String> command) throws IOException {
        assertEquals("kubectl", command.get(0), "the recipe is kubectl only: " + command);
        List<String> args = new ArrayList<>();
        List<Path> copies = new ArrayList<>();
        for (int i = 1; i < command.size(); i++) {
            String a = command.get(i).replace(README_NS, NS);
            Path f = Path.of(a);
            if (i > 1 && command.get(i - 1).equals("-f") && Files.isRegularFile(f)
                    && Pattern.compile("(?m)^\\s*namespace: " + README_NS + "$").matcher(Files.readString(f)).find()) {
                Path copy = Files.createTempFile("readme", ".yaml");
                Files.writeString(copy, Files.readString(f).replaceAll("(?m)^(\\s*)namespace: " + README_NS + "$", "$1namespace: " + NS));
                copies.add(copy);
                a = copy.toString();
            }
            args.add(a);
        }
        try {
            Kubectl.ok(args.toArray(String[]::new));
        } finally {
            for (Path c : copies) {
                Files.delete(c);
            }
        }
    }

    /** The index of the first command with both words. */
    static int indexOf(List<List<String>> commands, String verb, String file) {
        for (int i = 0; i < commands.size(); i++) {
            if (commands.get(i).contains(verb) && commands.get(i).contains(file)) {
                return i;
            }
        }
        throw new AssertionError("no kubectl " + verb + " ... " + file + " in the recipe: " + commands);
    }

    /** Cluster-scoped objects still owned by a pool of that name (another test's pool has the same name). */
    static List<String> leftovers(String pool) {
        List<HasMetadata> all = new ArrayList<>();
        all.addAll(admin.storage().v1().csiDrivers().list().getItems());
        all.addAll(admin.storage().v1().storageClasses().list().getItems());
        all.addAll(admin.rbac().clusterRoles().list().getItems());
        all.addAll(admin.rbac().clusterRoleBindings().list().getItems());
        return all.stream().filter(o -> o.getMetadata().getOwnerReferences() != null && o.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> r.getKind().equals("StoragePool") && r.getName().equals(pool)))
                .map(o -> o.getKind() + " " + o.getMetadata().getName()).toList();
    }

    static boolean established(String crd) {
        var c = admin.apiextensions().v1().customResourceDefinitions().withName(crd).get();
        return c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
                .anyMatch(x -> x.getType().equals("Established") && x.getStatus().equals("True"));
    }
}
