package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import io.loopcsi.operator.api.Images;

/**
 * The image `make image` builds is the one the install manifests and the StoragePool defaults
 * name: otherwise an admin following the README runs pods that find no image.
 */
class ImageNamesTest {

    @Test
    void theOperatorManifestAndThePoolDefaultsNameTheImageTheBuildMakes() throws IOException {
        String built = imageTheBuildMakes();
        assertEquals(built, Images.LOOPCSI, "StoragePool default (spec.images.loopcsi)");
        Matcher nativeImage = Pattern.compile("(?m)^NATIVE_IMAGE \\?= \\$\\(IMAGE\\)(\\S+)$").matcher(Files.readString(Path.of("Makefile")));
        assertTrue(nativeImage.find(), "NATIVE_IMAGE ?= $(IMAGE)... in the Makefile");
        assertEquals(built + nativeImage.group(1), Images.LOOPCSI_NATIVE, "StoragePool default (spec.images.loopcsiNative)");

        JsonNode operator = operatorContainer();
        assertEquals(built, operator.get("image").asText(), "kubernetes/operator.yaml");
        assertEquals("IfNotPresent", operator.get("imagePullPolicy").asText(),
                "a node uses an image that was loaded onto it (no pull from a registry that does not have it)");
        assertEquals("IfNotPresent", new Images().getPullPolicy().name(), "pool pods' default pull policy");
    }

    /** Makefile's IMAGE with its VERSION, the project version in pom.xml. */
    static String imageTheBuildMakes() throws IOException {
        Matcher image = Pattern.compile("(?m)^IMAGE \\?= (\\S+)$").matcher(Files.readString(Path.of("Makefile")));
        Matcher version = Pattern.compile("(?m)^  <version>([^<]+)</version>$").matcher(Files.readString(Path.of("pom.xml")));
        assertTrue(image.find(), "IMAGE ?= ... in the Makefile");
        assertTrue(version.find(), "project version in pom.xml");
        return image.group(1).replace("$(VERSION)", version.group(1));
    }

    static JsonNode operatorContainer() throws IOException {
        YAMLMapper yaml = new YAMLMapper();
        List<JsonNode> docs = new ArrayList<>();
        yaml.readerFor(JsonNode.class).readValues(Path.of("kubernetes/operator.yaml").toFile()).forEachRemaining(d -> docs.add((JsonNode) d));
        for (JsonNode d : docs) {
            if (d.path("kind").asText().equals("Deployment") && d.path("metadata").path("name").asText().equals("loopcsi-operator")) {
                for (JsonNode c : d.path("spec").path("template").path("spec").path("containers")) {
                    if (c.path("name").asText().equals("operator")) {
                        return c;
                    }
                }
            }
        }
        return fail("Deployment loopcsi-operator with container operator in kubernetes/operator.yaml");
    }
}
