package io.loopcsi.roles;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The arrows between packages run down (issue 33):
 *
 * <pre>
 * cli                     the launcher, doctor, csc, evacuate
 * roles                   what each role starts and which provider and metrics it gets
 * operator controller node metrics   a role's parts (node may name operator.api, the CRD's types)
 * csi                     the CSI services and their server, endpoints and sockets
 * handoff                 the hand-off CRDs' types
 * engine                  volumes on this machine
 * </pre>
 *
 * A package names no package above it, and none beside it unless listed (issue 25: csi/EngineBeans
 * once chose the controller's provider itself; csi/CsiServer once named cli/Endpoint and
 * metrics/CsiCallMetrics). And only roles/ (and cli/, which fires it) reacts to Quarkus' start: a
 * part a role does not use is never looked up, so its classes are not loaded (LeanRolesIT).
 */
class LayeringTest {

    private static final Path SRC = Path.of("src/main/java/io/loopcsi");

    @Test
    void engineNamesNoOtherPackage() throws IOException {
        assertEquals(List.of(), references("engine", "cli|roles|operator|controller|node|metrics|csi|handoff"));
    }

    @Test
    void handoffNamesOnlyTheEngine() throws IOException {
        assertEquals(List.of(), references("handoff", "cli|roles|operator|controller|node|metrics|csi"));
    }

    @Test
    void csiNamesNoRoleNoMetricsNoLauncher() throws IOException {
        assertEquals(List.of(), references("csi", "cli|roles|operator|controller|node|metrics"));
    }

    @Test
    void rolePartsNameNoWiringNoLauncher() throws IOException {
        assertEquals(List.of(), references("controller", "cli|roles|operator|node|metrics"));
        assertEquals(List.of(), references("node", "cli|roles|controller|metrics|operator\\.(?!api\\.)"));
        assertEquals(List.of(), references("operator", "cli|roles|controller|node|metrics"));
        assertEquals(List.of(), references("metrics", "cli|roles|operator|controller|node"));
    }

    @Test
    void rolesNameNoLauncher() throws IOException {
        assertEquals(List.of(), references("roles", "cli"));
    }

    @Test
    void onlyTheWiringObservesStart() throws IOException {
        for (String pkg : List.of("engine", "handoff", "csi", "controller", "node", "operator", "metrics")) {
            assertEquals(List.of(), matches(pkg, Pattern.compile("@Observes[^,)]*StartupEvent|@Startup\\b")),
                    pkg + "/ reacts to Quarkus' start itself; roles.RoleWiring starts what a role uses");
        }
    }

    private static List<String> references(String pkg, String forbidden) throws IOException {
        return matches(pkg, Pattern.compile("io\\.loopcsi\\.(" + forbidden + ")\\.?"));
    }

    private static List<String> matches(String pkg, Pattern p) throws IOException {
        try (Stream<Path> files = Files.walk(SRC.resolve(pkg))) {
            return files.filter(f -> f.toString().endsWith(".java")).flatMap(f -> {
                try {
                    return p.matcher(Files.readString(f)).results().map(r -> SRC.relativize(f) + ": " + r.group());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).distinct().toList();
        }
    }
}
