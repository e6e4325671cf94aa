package io.loopcsi.e2e;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Name and ID of the image in a docker-archive tarball (what {@code make image} and
 * {@code make standin-images} write): its first RepoTag, and its ID (the digest of its config),
 * which is what kubelet reports as a container's {@code imageID} once it runs that image.
 */
record ImageArchive(Path file, String name, String id) {

    static ImageArchive read(Path tar) {
        try {
            Process p = new ProcessBuilder("tar", "-xOf", tar.toString(), "manifest.json").redirectErrorStream(false).start();
            byte[] json = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(tar + ": no manifest.json (not a docker-archive?): "
                        + new String(p.getErrorStream().readAllBytes()));
            }
            JsonNode m = new ObjectMapper().readTree(json).get(0);
            String config = m.get("Config").asText();
            String id = "sha256:" + config.replaceFirst("^.*/", "").replaceFirst("\\.json$", "");
            return new ImageArchive(tar, m.get("RepoTags").get(0).asText(), id);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + tar + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
