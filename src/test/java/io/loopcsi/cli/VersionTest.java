package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

class VersionTest {

    @Test
    void theCsiSpecVersionIsTheProtoFilesAndTheBuildFilledInTheRest() throws Exception {
        String first = Files.readAllLines(Path.of("proto/csi.proto")).get(0);
        assertTrue(first.contains("spec v" + Version.CSI_SPEC + " "), first);
        String v = Version.text();
        assertTrue(v.startsWith("loopcsi 0.1.0\nCSI spec " + Version.CSI_SPEC + "\nQuarkus 3."), v);
        assertTrue(v.contains("\nruntime JVM\n"), v);
        assertTrue(v.matches("(?s).*\ncommit [0-9a-f]{12}( \\(with uncommitted changes\\))?\n"), v);
    }
}
