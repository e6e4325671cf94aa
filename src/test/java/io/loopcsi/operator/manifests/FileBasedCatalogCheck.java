package io.loopcsi.operator.manifests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What {@code opm validate} checks of a file-based catalog, written out here (no opm binary on
 * these machines). The rules and their sources, operator-framework/operator-registry:
 * <ul>
 * <li>the blob schemas of alpha/declcfg/declcfg.go and of OLM's documentation (olm.package,
 * olm.channel, olm.bundle; every blob has a {@code schema}; names, packages and images are
 * non-empty strings; a property has a type and a non-null value);</li>
 * <li>alpha/declcfg/declcfg_to_model.go {@code ConvertToModel}: a channel or bundle names a known
 * package; a channel has no entry twice; a bundle has exactly one olm.package property naming its
 * own package with a semver version; every bundle is an entry of some channel and every entry has
 * its bundle;</li>
 * <li>alpha/model/model.go {@code Validate}: a package has a default channel that is one of its
 * channels; a channel has bundles, exactly one head (an entry nobody replaces or skips), and from
 * the head the replaces chain reaches every entry not skipped, without a cycle; no two bundles of
 * a package have one version;</li>
 * <li>alpha/property/property.go: olm.gvk has group, kind and version; olm.bundle.object's data
 * is a base64 manifest (alpha/declcfg/load.go reads it as YAML); the CSV among them is named as
 * the bundle (the registry serves the bundle under that name).</li>
 * </ul>
 * Plus what OLM needs of a channel entry's skipRange: a blang/semver range
 * (pkg/controller/registry/resolver/cache/operators.go {@code semver.ParseRange}).
 */
final class FileBasedCatalogCheck {

    static final Pattern SEMVER = Pattern.compile(
            "(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?");
    static final Pattern COMPARATOR = Pattern.compile("(>=|<=|>|<|==|=|!=|!)?(" + SEMVER.pattern() + ")");

    private FileBasedCatalogCheck() {
    }

    /** The problems of the catalog under {@code root} (every .yaml, .yml and .json file); empty when valid. */
    static List<String> check(Path root) throws IOException {
        List<JsonNode> blobs = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(Files::isRegularFile).filter(p -> p.toString().matches(".*\\.(ya?ml|json)$")).sorted().toList()) {
                blobs.addAll(OlmBundle.yamlDocs(Files.readString(f)));
            }
        }
        return check(blobs);
    }

    static List<String> check(List<? extends JsonNode> blobs) {
        List<String> problems = new ArrayList<>();
        Map<String, JsonNode> packages = new LinkedHashMap<>();
        Map<String, Map<String, JsonNode>> channels = new HashMap<>();
        Map<String, Map<String, JsonNode>> bundles = new HashMap<>();
        for (JsonNode b : blobs) {
            String schema = text(b, "schema");
            String name = text(b, "name");
            switch (schema == null ? "" : schema) {
                case "olm.package" -> {
                    require(problems, name, "olm.package without a name");
                    require(problems, text(b, "defaultChannel"), "package " + name + ": defaultChannel must be set");
                    if (packages.put(name, b) != null) {
                        problems.add("package " + name + " defined twice");
                    }
                    JsonNode icon = b.get("icon");
                    if (icon != null && (!base64(text(icon, "base64data")) || text(icon, "mediatype") == null)) {
                        problems.add("package " + name + ": icon needs base64data (base64) and mediatype");
                    }
                }
                case "olm.channel" -> {
                    String pkg = text(b, "package");
                    require(problems, name, "olm.channel of package " + pkg + " without a name");
                    require(problems, pkg, "channel " + name + " without a package");
                    if (channels.computeIfAbsent(pkg, k -> new HashMap<>()).put(name, b) != null) {
                        problems.add("package " + pkg + ": channel " + name + " defined twice");
                    }
                    checkEntries(problems, pkg, name, b.get("entries"));
                }
                case "olm.bundle" -> {
                    String pkg = text(b, "package");
                    require(problems, name, "olm.bundle of package " + pkg + " without a name");
                    require(problems, pkg, "bundle " + name + " without a package");
                    require(problems, text(b, "image"), "bundle " + name + ": image must be set");
                    if (bundles.computeIfAbsent(pkg, k -> new HashMap<>()).put(name, b) != null) {
                        problems.add("package " + pkg + ": bundle " + name + " defined twice");
                    }
                    checkBundle(problems, pkg, name, b);
                }
                default -> {
                    if (schema == null) {
                        problems.add("a blob without a schema: " + shortly(b));
                    }
                    // other schemas are allowed (declcfg keeps them as Others)
                }
            }
        }
        channels.keySet().stream().filter(p -> !packages.containsKey(p)).forEach(p -> problems.add("unknown package " + p + " of channels " + channels.get(p).keySet()));
        bundles.keySet().stream().filter(p -> !packages.containsKey(p)).forEach(p -> problems.add("unknown package " + p + " of bundles " + bundles.get(p).keySet()));
        packages.forEach((pkg, p) -> checkPackage(problems, pkg, p, channels.getOrDefault(pkg, Map.of()), bundles.getOrDefault(pkg, Map.of())));
        return problems;
    }

    private static void checkEntries(List<String> problems, String pkg, String channel, JsonNode entries) {
        if (entries == null || !entries.isArray()) {
            problems.add("package " + pkg + ", channel " + channel + ": entries must be a list");
            return;
        }
        Set<String> seen = new HashSet<>();
        for (JsonNode e : entries) {
            String name = text(e, "name");
            require(problems, name, "package " + pkg + ", channel " + channel + ": an entry without a name");
            if (name != null && !seen.add(name)) {
                problems.add("package " + pkg + ", channel " + channel + ": duplicate entry " + name);
            }
            if (e.has("replaces") && text(e, "replaces") == null) {
                problems.add("entry " + name + ": replaces is empty");
            }
            for (JsonNode s : e.path("skips")) {
                if (s.asText().isEmpty()) {
                    problems.add("entry " + name + ": an empty skip");
                }
            }
            if (e.has("skipRange") && !semverRange(text(e, "skipRange"))) {
                problems.add("entry " + name + ": skipRange " + e.get("skipRange") + " is not a semver range");
            }
        }
    }

    private static void checkBundle(List<String> problems, String pkg, String name, JsonNode b) {
        List<JsonNode> packageProps = new ArrayList<>();
        for (JsonNode p : b.path("properties")) {
            String type = text(p, "type");
            JsonNode value = p.get("value");
            if (type == null || value == null || value.isNull()) {
                problems.add("bundle " + name + ": a property needs a type and a value: " + shortly(p));
                continue;
            }
            switch (type) {
                case "olm.package" -> packageProps.add(value);
                case "olm.gvk" -> {
                    if (text(value, "group") == null || text(value, "kind") == null || text(value, "version") == null) {
                        problems.add("bundle " + name + ": olm.gvk needs group, kind and version: " + value);
                    }
                }
                case "olm.bundle.object" -> checkObject(problems, name, value);
                default -> {
                }
            }
        }
        if (packageProps.size() != 1) {
            problems.add("bundle " + name + ": must have exactly one olm.package property, found " + packageProps.size());
        } else {
            JsonNode p = packageProps.get(0);
            if (!pkg.equals(text(p, "packageName"))) {
                problems.add("bundle " + name + ": olm.package names package " + text(p, "packageName") + ", not " + pkg);
            }
            if (text(p, "version") == null || !SEMVER.matcher(text(p, "version")).matches()) {
                problems.add("bundle " + name + ": version " + p.get("version") + " is not semver");
            }
        }
        for (JsonNode i : b.path("relatedImages")) {
            if (text(i, "image") == null || (i.has("name") && text(i, "name") == null)) {
                problems.add("bundle " + name + ": a related image needs an image (and a non-empty name if any): " + i);
            }
        }
    }

    private static void checkObject(List<String> problems, String bundle, JsonNode value) {
        String data = text(value, "data");
        if (!base64(data)) {
            problems.add("bundle " + bundle + ": olm.bundle.object data is not base64");
            return;
        }
        try {
            List<ObjectNode> docs = OlmBundle.yamlDocs(new String(Base64.getDecoder().decode(data), StandardCharsets.UTF_8));
            if (docs.size() != 1 || text(docs.get(0), "kind") == null) {
                problems.add("bundle " + bundle + ": an olm.bundle.object is not one manifest with a kind");
            } else if ("ClusterServiceVersion".equals(text(docs.get(0), "kind")) && !bundle.equals(docs.get(0).at("/metadata/name").asText())) {
                problems.add("bundle " + bundle + ": its CSV is named " + docs.get(0).at("/metadata/name").asText());
            }
        } catch (IOException e) {
            problems.add("bundle " + bundle + ": an olm.bundle.object is not YAML: " + e.getMessage());
        }
    }

    private static void checkPackage(List<String> problems, String pkg, JsonNode p, Map<String, JsonNode> channels, Map<String, JsonNode> bundles) {
        if (channels.isEmpty()) {
            problems.add("package " + pkg + ": must contain at least one channel");
        }
        String defaultChannel = text(p, "defaultChannel");
        if (defaultChannel != null && !channels.containsKey(defaultChannel)) {
            problems.add("package " + pkg + ": default channel " + defaultChannel + " not found in channels " + new TreeSet<>(channels.keySet()));
        }
        Set<String> entered = new HashSet<>();
        channels.forEach((name, c) -> {
            Map<String, JsonNode> entries = new LinkedHashMap<>();
            c.path("entries").forEach(e -> entries.put(e.path("name").asText(), e));
            entered.addAll(entries.keySet());
            if (entries.isEmpty()) {
                problems.add("package " + pkg + ", channel " + name + ": must contain at least one bundle");
            } else {
                checkGraph(problems, pkg, name, entries);
            }
            entries.keySet().stream().filter(e -> !bundles.containsKey(e))
                    .forEach(e -> problems.add("package " + pkg + ", channel " + name + ": no olm.bundle blob for entry " + e));
        });
        bundles.keySet().stream().filter(b -> !entered.contains(b))
                .forEach(b -> problems.add("package " + pkg + ": bundle " + b + " not found in any channel entries"));
        Map<String, String> byVersion = new HashMap<>();
        bundles.forEach((name, b) -> {
            for (JsonNode prop : b.path("properties")) {
                if ("olm.package".equals(text(prop, "type"))) {
                    String other = byVersion.putIfAbsent(prop.at("/value/version").asText(), name);
                    if (other != null) {
                        problems.add("package " + pkg + ": bundles " + other + " and " + name + " have one version " + prop.at("/value/version").asText());
                    }
                }
            }
        });
    }

    /** model.go Channel.Head and validateReplacesChain. */
    private static void checkGraph(List<String> problems, String pkg, String channel, Map<String, JsonNode> entries) {
        Set<String> incoming = new HashSet<>();
        Set<String> skipped = new HashSet<>();
        entries.values().forEach(e -> {
            if (e.has("replaces")) {
                incoming.add(e.get("replaces").asText());
            }
            e.path("skips").forEach(s -> {
                incoming.add(s.asText());
                skipped.add(s.asText());
            });
        });
        List<String> heads = entries.keySet().stream().filter(n -> !incoming.contains(n)).sorted().toList();
        if (heads.size() != 1) {
            problems.add("package " + pkg + ", channel " + channel + ": " + (heads.isEmpty() ? "no channel head found in graph"
                    : "multiple channel heads found in graph: " + String.join(", ", heads)));
            return;
        }
        Set<String> chain = new HashSet<>();
        String cur = heads.get(0);
        while (cur != null && chain.add(cur)) {
            JsonNode e = entries.get(cur);
            String replaces = e == null || !e.has("replaces") ? null : e.get("replaces").asText();
            if (replaces != null && skipped.contains(replaces)) {
                break;
            }
            if (replaces != null && chain.contains(replaces)) {
                problems.add("package " + pkg + ", channel " + channel + ": detected cycle in replaces chain at " + replaces);
                return;
            }
            cur = replaces;
        }
        entries.keySet().stream().filter(n -> !chain.contains(n) && !skipped.contains(n)).sorted()
                .forEach(n -> problems.add("package " + pkg + ", channel " + channel + ": stranded bundle " + n));
    }

    /** A blang/semver range: comparators joined by spaces (and), alternatives by "||". */
    static boolean semverRange(String range) {
        if (range == null || range.isBlank()) {
            return false;
        }
        for (String alternative : range.split("\\|\\|")) {
            String[] comparators = alternative.trim().split("\\s+");
            if (alternative.isBlank()) {
                return false;
            }
            for (String c : comparators) {
                if (!COMPARATOR.matcher(c).matches()) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean base64(String s) {
        if (s == null || s.isEmpty()) {
            return false;
        }
        try {
            Base64.getDecoder().decode(s);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static void require(List<String> problems, String value, String problem) {
        if (value == null) {
            problems.add(problem);
        }
    }

    /** A non-empty string field, else null. */
    private static String text(JsonNode n, String field) {
        JsonNode v = n == null ? null : n.get(field);
        return v != null && v.isTextual() && !v.asText().isEmpty() ? v.asText() : null;
    }

    private static String shortly(JsonNode n) {
        String s = n.toString();
        return s.length() > 120 ? s.substring(0, 120) + "…" : s;
    }
}
