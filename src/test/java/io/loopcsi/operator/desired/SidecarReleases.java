package io.loopcsi.operator.desired;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The CSI sidecar releases the operator deploys, read from what each release documents about
 * itself: ../shared/data/sidecars/ (its README, upstream deploy manifests and, for the 1.20 set,
 * its {@code -h} output). Tests hold the controller Deployment and RBAC against these, not
 * against the driver's own expectations.
 */
final class SidecarReleases {

    static final Path DATA = Path.of(System.getenv().getOrDefault("LOOPCSI_SIDECAR_DATA", "../shared/data/sidecars"));

    /** One release: the container it runs as in the controller Deployment, its data directory, its image tag. */
    record Release(String container, String repo, String version) {

        Path dir() {
            return DATA.resolve(repo + "-" + version);
        }

        String image() {
            return SidecarImages.REGISTRY + container + ":" + version;
        }

        /** This release's upstream RBAC: the rules of its ClusterRoles and of its Roles. */
        Rbac rbac() {
            Path file = repo.equals("external-snapshotter") ? dir().resolve("deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml")
                    : dir().resolve("deploy/kubernetes/rbac.yaml");
            List<JsonNode> cluster = new ArrayList<>();
            List<JsonNode> namespaced = new ArrayList<>();
            try {
                var yaml = new ObjectMapper(new YAMLFactory());
                try (var docs = yaml.readerFor(JsonNode.class).readValues(Files.readString(file))) {
                    while (docs.hasNext()) {
                        JsonNode d = (JsonNode) docs.next();
                        if (d == null || d.isMissingNode() || d.path("rules").isMissingNode()) {
                            continue;
                        }
                        (d.path("kind").asText().equals("ClusterRole") ? cluster : namespaced).addAll(toList(d.path("rules")));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(file + " (expected the sidecars' data in " + DATA + ", shared/data beside the clone)", e);
            }
            return new Rbac(cluster, namespaced);
        }

        /** The flags this release documents in its README ("* `--flag`" entries). */
        Set<String> readmeFlags() {
            return matches(dir().resolve("README.md"), Pattern.compile("^\\* `(--[a-z0-9-]+)", Pattern.MULTILINE));
        }
    }

    record Rbac(List<JsonNode> clusterRules, List<JsonNode> namespaceRules) {
    }

    static final Release PROVISIONER_2_1_2 = new Release("csi-provisioner", "external-provisioner", "v2.1.2");
    static final Release RESIZER_1_1_0 = new Release("csi-resizer", "external-resizer", "v1.1.0");
    static final Release SNAPSHOTTER_4_0_0 = new Release("csi-snapshotter", "external-snapshotter", "v4.0.0");

    /** Per server minor version the operator was written for, the releases SidecarImages picks. */
    static final Map<Integer, List<Release>> BY_SERVER = Map.of(
            20, List.of(PROVISIONER_2_1_2, RESIZER_1_1_0, SNAPSHOTTER_4_0_0),
            22, List.of(new Release("csi-provisioner", "external-provisioner", "v3.1.1"), new Release("csi-resizer", "external-resizer", "v1.4.0"),
                    new Release("csi-snapshotter", "external-snapshotter", "v5.0.1")),
            30, List.of(new Release("csi-provisioner", "external-provisioner", "v5.3.0"), new Release("csi-resizer", "external-resizer", "v1.14.0"),
                    new Release("csi-snapshotter", "external-snapshotter", "v8.3.0")),
            34, List.of(new Release("csi-provisioner", "external-provisioner", "v6.3.0"), new Release("csi-resizer", "external-resizer", "v2.2.1"),
                    new Release("csi-snapshotter", "external-snapshotter", "v8.6.0")));

    private SidecarReleases() {
    }

    /** Every flag in a {@code -h} output (help/NAME-VERSION.txt): "  -flag" (Go's flag) or "      --flag" (pflag). */
    static Set<String> helpFlags(Release r) {
        Path help = DATA.resolve("help").resolve(r.container() + "-" + r.version() + ".txt");
        Set<String> out = new TreeSet<>();
        for (String f : matches(help, Pattern.compile("^\\s+-{1,2}([a-z0-9_-]+)", Pattern.MULTILINE))) {
            out.add("--" + f);
        }
        return out;
    }

    static boolean hasHelp(Release r) {
        return Files.exists(DATA.resolve("help").resolve(r.container() + "-" + r.version() + ".txt"));
    }

    private static Set<String> matches(Path file, Pattern p) {
        try {
            Matcher m = p.matcher(Files.readString(file));
            Set<String> out = new TreeSet<>();
            while (m.find()) {
                out.add(m.group(1));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(file + " (expected the sidecars' data in " + DATA + ", shared/data beside the clone)", e);
        }
    }

    private static List<JsonNode> toList(JsonNode array) {
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
