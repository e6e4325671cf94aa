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
 * The arrows between packages run down: the engine and the CSI services name no role's package
 * (controller, node, operator) and no role wiring; which role gets what is decided in roles/
 * (issue 25: csi/EngineBeans once chose the controller's provider itself).
 */
class LayeringTest {

    private static final Path SRC = Path.of("src/main/java/io/loopcsi");
    private static final Pattern REF = Pattern.compile("io\\.loopcsi\\.(controller|node|operator|roles)\\.");

    @Test
    void csiAndEngineNameNoRole() throws IOException {
        assertEquals(List.of(), references("csi"), "csi/ classes naming a role's package");
        assertEquals(List.of(), references("engine"), "engine/ classes naming a role's package");
    }

    private static List<String> references(String pkg) throws IOException {
        try (Stream<Path> files = Files.walk(SRC.resolve(pkg))) {
            return files.filter(f -> f.toString().endsWith(".java")).flatMap(f -> {
                try {
                    return REF.matcher(Files.readString(f)).results().map(r -> SRC.relativize(f) + ": io.loopcsi." + r.group(1));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).distinct().toList();
        }
    }
}
