package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The committed catalog (olm-catalog/) is a valid file-based catalog of the committed bundle, the
 * check finds each kind of broken catalog (so a pass means something), the next version's entry
 * upgrades this one, and kubernetes/olm/catalog.yaml subscribes to what the catalog serves.
 */
class FileBasedCatalogTest {

    static final Path ROOT = Path.of(FileBasedCatalog.DIR, "catalog");

    static List<ObjectNode> committed() throws IOException {
        return OlmBundle.yamlDocs(Files.readString(Path.of(FileBasedCatalog.DIR, FileBasedCatalog.CATALOG)));
    }

    static ObjectNode ofSchema(List<ObjectNode> blobs, String schema) {
        return blobs.stream().filter(b -> b.path("schema").asText().equals(schema)).findFirst().orElseThrow();
    }

    @Test
    void theCommittedCatalogIsValid() throws IOException {
        assertEquals(List.of(), FileBasedCatalogCheck.check(ROOT));
        List<ObjectNode> blobs = committed();
        assertEquals(List.of("olm.package", "olm.channel", "olm.bundle"), blobs.stream().map(b -> b.get("schema").asText()).toList());
    }

    @Test
    void itsBundleIsTheCommittedBundle() throws IOException {
        ObjectNode bundle = ofSchema(committed(), "olm.bundle");
        JsonNode csv = OlmBundle.YAML.readTree(OlmBundleTest.CSV_FILE.toFile());
        assertEquals(csv.at("/metadata/name").asText(), bundle.get("name").asText());
        TreeSet<String> objects = new TreeSet<>();
        TreeSet<String> gvks = new TreeSet<>();
        for (JsonNode p : bundle.get("properties")) {
            switch (p.get("type").asText()) {
                case "olm.bundle.object" -> objects.add(new String(Base64.getDecoder().decode(p.at("/value/data").asText()), StandardCharsets.UTF_8));
                case "olm.gvk" -> gvks.add(p.at("/value/kind").asText() + "." + p.at("/value/group").asText() + "/" + p.at("/value/version").asText());
                case "olm.package" -> assertEquals(csv.at("/spec/version").asText(), p.at("/value/version").asText());
                default -> {
                }
            }
        }
        TreeSet<String> manifests = new TreeSet<>();
        try (Stream<Path> files = Files.list(Path.of("olm-bundle/manifests"))) {
            for (Path f : files.toList()) {
                manifests.add(Files.readString(f));
            }
        }
        assertEquals(manifests, objects, "every manifest of olm-bundle/manifests/ is a bundle object, unchanged");
        TreeSet<String> owned = new TreeSet<>();
        csv.at("/spec/customresourcedefinitions/owned").forEach(o -> owned.add(o.get("kind").asText() + "."
                + o.get("name").asText().substring(o.get("name").asText().indexOf('.') + 1) + "/" + o.get("version").asText()));
        assertEquals(owned, gvks, "the bundle provides every owned API");
        ObjectNode channel = ofSchema(committed(), "olm.channel");
        assertEquals(csv.at("/metadata/annotations/olm.skipRange").asText(), channel.at("/entries/0/skipRange").asText());
    }

    @Test
    void theCheckRefusesBrokenCatalogs() throws IOException {
        refused("defaultChannel must be set", b -> ofSchema(b, "olm.package").remove("defaultChannel"));
        refused("default channel beta not found", b -> ofSchema(b, "olm.package").put("defaultChannel", "beta"));
        refused("image must be set", b -> ofSchema(b, "olm.bundle").remove("image"));
        refused("exactly one olm.package property", b -> ((ArrayNode) ofSchema(b, "olm.bundle").get("properties")).remove(0));
        refused("not semver", b -> ((ObjectNode) ofSchema(b, "olm.bundle").get("properties").get(0).get("value")).put("version", "v1"));
        refused("not found in any channel entries", b -> ofSchema(b, "olm.bundle").put("name", "loopcsi.v9.9.9"));
        refused("no olm.bundle blob for entry", b -> ((ArrayNode) ofSchema(b, "olm.channel").get("entries")).addObject().put("name", "loopcsi.v0.0.1"));
        refused("not a semver range", b -> ((ObjectNode) ofSchema(b, "olm.channel").get("entries").get(0)).put("skipRange", "< 0.1"));
        refused("unknown package", b -> ofSchema(b, "olm.channel").put("package", "other"));
        refused("its CSV is named", b -> {
            for (JsonNode p : ofSchema(b, "olm.bundle").get("properties")) {
                String doc = p.at("/value/data").asText();
                String text = doc.isEmpty() ? "" : new String(Base64.getDecoder().decode(doc), StandardCharsets.UTF_8);
                if (text.contains("kind: ClusterServiceVersion")) {
                    ((ObjectNode) p.get("value")).put("data", Base64.getEncoder().encodeToString(
                            text.replace("name: loopcsi.v", "name: other.v").getBytes(StandardCharsets.UTF_8)));
                }
            }
        });
        refused("a blob without a schema", b -> b.get(0).remove("schema"));
    }

    @Test
    void theNextVersionsEntryUpgradesThisOneAndAStrandedOneIsRefused() throws IOException {
        List<ObjectNode> blobs = new ArrayList<>(committed());
        ObjectNode current = ofSchema(blobs, "olm.bundle");
        String name = current.get("name").asText();
        ObjectNode next = next(current, "loopcsi.v0.1.1", "0.1.1");
        blobs.add(next);
        ObjectNode entries = ofSchema(blobs, "olm.channel");
        ((ArrayNode) entries.get("entries")).addObject().put("name", "loopcsi.v0.1.1").put("replaces", name).put("skipRange", ">=0.0.0 <0.1.1");
        assertEquals(List.of(), FileBasedCatalogCheck.check(blobs), "0.1.1 replacing " + name + " is a valid channel");

        ((ObjectNode) entries.get("entries").get(1)).remove("replaces");
        assertTrue(FileBasedCatalogCheck.check(blobs).stream().anyMatch(p -> p.contains("multiple channel heads")),
                "without replaces (or skips) the channel has two heads: " + FileBasedCatalogCheck.check(blobs));
    }

    @Test
    void theSubscriptionAsksForWhatTheCatalogServes() throws IOException {
        List<ObjectNode> docs = OlmBundle.yamlDocs(Files.readString(Path.of(CatalogSubscription.FILE)));
        ObjectNode source = OlmBundle.ofKind(docs, "CatalogSource");
        ObjectNode sub = OlmBundle.ofKind(docs, "Subscription");
        List<ObjectNode> catalog = committed();
        ObjectNode pkg = ofSchema(catalog, "olm.package");
        assertEquals(pkg.get("name").asText(), sub.at("/spec/name").asText());
        assertEquals(pkg.get("defaultChannel").asText(), sub.at("/spec/channel").asText());
        List<String> entries = new ArrayList<>();
        ofSchema(catalog, "olm.channel").get("entries").forEach(e -> entries.add(e.get("name").asText()));
        assertTrue(entries.contains(sub.at("/spec/startingCSV").asText()), "startingCSV is an entry of the channel: " + entries);
        assertEquals(source.at("/metadata/name"), sub.at("/spec/source"));
        assertEquals(source.at("/metadata/namespace"), sub.at("/spec/sourceNamespace"));
        assertEquals("Manual", sub.at("/spec/installPlanApproval").asText());
        String bundleImage = ofSchema(catalog, "olm.bundle").get("image").asText();
        assertEquals(bundleImage.replace("-bundle:", "-catalog:"), source.at("/spec/image").asText());
        assertFalse(Files.readString(Path.of("olm-bundle/bundle.Dockerfile")).isEmpty());
    }

    static ObjectNode next(ObjectNode current, String name, String version) {
        ObjectNode next = current.deepCopy();
        next.put("name", name);
        ArrayNode props = next.putArray("properties");
        props.addObject().put("type", "olm.package").putObject("value").put("packageName", current.get("package").asText()).put("version", version);
        return next;
    }

    static void refused(String problem, Consumer<List<ObjectNode>> breakIt) throws IOException {
        List<ObjectNode> blobs = committed();
        breakIt.accept(blobs);
        List<String> problems = FileBasedCatalogCheck.check(blobs);
        assertTrue(problems.stream().anyMatch(p -> p.contains(problem)), "expected a problem '" + problem + "', got " + problems);
    }
}
