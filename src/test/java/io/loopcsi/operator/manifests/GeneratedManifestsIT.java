package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * The committed CRD, RBAC, OLM bundle, its catalog (olm-catalog/) and the objects for installing
 * its CSV without a catalog (kubernetes/olm/operator-rbac.yaml) must be what the build generates
 * from the code (QOSDK
 * writes them into target/kubernetes/ and target/bundle/ at package time, so this runs as an
 * integration test, after package). With -Dloopcsi.update-manifests=true it rewrites the
 * committed copies instead: `make manifests` (= `make bundle`).
 */
class GeneratedManifestsIT {

    static final Path GENERATED = Path.of("target/kubernetes");
    static final List<String> CRDS = List.of("storagepools.loopcsi.io-v1.yml", "loopvolumes.loopcsi.io-v1.yml",
            "loopsnapshots.loopcsi.io-v1.yml", "loopgroupsnapshots.loopcsi.io-v1.yml", "looppoolnodes.loopcsi.io-v1.yml",
            "looptransfers.loopcsi.io-v1.yml");
    static final Set<String> RBAC_KINDS = Set.of("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding");
    static final String RBAC_HEADER = "# Generated from the code by the build (QOSDK + quarkus-kubernetes): the operator's own RBAC.\n"
            + "# Do not edit: change the reconciler/dependents (or @RBACRule), then `make manifests`.\n";
    static final boolean UPDATE = Boolean.getBoolean("loopcsi.update-manifests");

    @Test
    void committedCrdsAreTheGeneratedOnes() throws IOException {
        for (String crd : CRDS) {
            String generated = Files.readString(GENERATED.resolve(crd));
            for (Path committed : List.of(Path.of("crds", crd), Path.of("kubernetes", "crds", crd))) {
                check(committed, generated);
            }
        }
    }

    @Test
    void committedRbacIsTheGeneratedOne() throws IOException {
        String all = Files.readString(GENERATED.resolve("kubernetes.yml"));
        @SuppressWarnings("unchecked")
        List<HasMetadata> docs = (List<HasMetadata>) (Object) Serialization.unmarshal(all);
        List<HasMetadata> rbac = docs.stream().filter(o -> RBAC_KINDS.contains(o.getKind())).toList();
        assertTrue(rbac.stream().anyMatch(o -> o.getMetadata().getName().equals("loopcsi-storagepool-cluster-role")), "generated ClusterRole missing");
        StringBuilder out = new StringBuilder(RBAC_HEADER);
        for (HasMetadata o : rbac) {
            o.getMetadata().setAnnotations(null);
            out.append(Serialization.asYaml(o));
        }
        check(Path.of("kubernetes", "rbac.yaml"), out.toString());
    }

    @Test
    void committedOlmBundleIsTheGeneratedOne() throws IOException {
        checkDirectory(Path.of("olm-bundle"), bundle());
    }

    /** The file-based catalog of olm-catalog/ is made from the generated bundle. */
    @Test
    void committedCatalogIsTheGeneratedOne() throws IOException {
        checkDirectory(Path.of(FileBasedCatalog.DIR), FileBasedCatalog.generate(bundle()));
    }

    /** kubernetes/olm/operator-rbac.yaml: what an InstallPlan would create from the generated CSV, in its suggested namespace. */
    @Test
    void committedOlmInstallObjectsAreTheGeneratedOnes() throws IOException {
        JsonNode csv = OlmBundle.YAML.readTree(bundle().get(OlmBundle.CSV));
        String namespace = csv.at("/metadata/annotations/operatorframework.io~1suggested-namespace").asText();
        assertFalse(namespace.isEmpty(), "the CSV suggests a namespace");
        check(Path.of(OlmInstallObjects.FILE), OlmInstallObjects.yaml(csv, namespace));
    }

    /** kubernetes/olm/catalog.yaml: the CatalogSource of the catalog image and the Subscription to the generated bundle. */
    @Test
    void committedCatalogSubscriptionIsTheGeneratedOne() throws IOException {
        SortedMap<String, String> bundle = bundle();
        JsonNode csv = OlmBundle.YAML.readTree(bundle.get(OlmBundle.CSV));
        JsonNode annotations = OlmBundle.YAML.readTree(bundle.get("metadata/annotations.yaml")).get("annotations");
        String namespace = csv.at("/metadata/annotations/operatorframework.io~1suggested-namespace").asText();
        check(Path.of(CatalogSubscription.FILE), CatalogSubscription.yaml(csv, annotations, namespace));
    }

    private static SortedMap<String, String> bundle() throws IOException {
        return OlmBundle.generate(OlmBundle.GENERATED, OlmBundle.GENERATED_CRDS, OlmBundle.KUBERNETES);
    }

    /** Every generated file committed as generated, and no committed file the build no longer generates. */
    private static void checkDirectory(Path dir, SortedMap<String, String> generated) throws IOException {
        Set<String> committed = new TreeSet<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.filter(Files::isRegularFile).forEach(f -> committed.add(dir.relativize(f).toString()));
            }
        }
        for (String stale : committed) {
            if (!generated.containsKey(stale)) {
                if (UPDATE) {
                    Files.delete(dir.resolve(stale));
                } else {
                    throw new AssertionError(dir + "/" + stale + " is no longer generated; run `make bundle` and commit the result");
                }
            }
        }
        for (var f : generated.entrySet()) {
            check(dir.resolve(f.getKey()), f.getValue());
        }
    }

    private static void check(Path committed, String generated) throws IOException {
        if (UPDATE) {
            Files.createDirectories(committed.getParent());
            Files.writeString(committed, generated);
            return;
        }
        String actual = Files.exists(committed) ? Files.readString(committed) : "(missing)";
        assertEquals(generated, actual, committed + " differs from what the build generates from the code; run `make manifests` and commit the result");
    }
}
