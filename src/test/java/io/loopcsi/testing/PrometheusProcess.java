package io.loopcsi.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Debian's real Prometheus server ({@code prometheus} package; .ci/run and `make test` install it)
 * on loopback, scraping one target every second; tests ask its HTTP API, never the target.
 */
public final class PrometheusProcess implements AutoCloseable {

    public static final Path BINARY = Path.of("/usr/bin/prometheus");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Process process;
    private final Path log;
    private final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private PrometheusProcess(Process process, Path log, URI base) {
        this.process = process;
        this.log = log;
        this.base = base;
    }

    /** Starts Prometheus in dir scraping http://target/path every second; returns once it is ready. */
    public static PrometheusProcess start(Path dir, String target, String path) throws Exception {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException(BINARY + " is missing: install Debian's prometheus package (bash src/main/sh/host-packages.sh --test)");
        }
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                scrape_configs:
                  - job_name: loopcsi
                    metrics_path: %s
                    static_configs:
                      - targets: ['%s']
                """.formatted(path, target));
        int port = freePort();
        Path log = dir.resolve("prometheus.log");
        Process p = new ProcessBuilder(BINARY.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("tsdb"),
                "--web.listen-address=127.0.0.1:" + port).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        PrometheusProcess prom = new PrometheusProcess(p, log, URI.create("http://127.0.0.1:" + port));
        prom.awaitReady();
        return prom;
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("prometheus exited with " + process.exitValue() + ":\n" + log());
            }
            try {
                if (get("/-/ready").statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("prometheus not ready after 60 s:\n" + log());
    }

    private HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(base.resolve(pathAndQuery)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The API's answer to an instant query: its {@code data} (status "success"), else an IllegalArgumentException with Prometheus' error. */
    public JsonNode query(String promql) throws IOException, InterruptedException {
        HttpResponse<String> r = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        JsonNode body = JSON.readTree(r.body());
        if (!"success".equals(body.path("status").asText())) {
            throw new IllegalArgumentException(promql + ": " + body.path("errorType").asText() + ": " + body.path("error").asText());
        }
        return body.path("data");
    }

    /** The single value of a query that must return exactly one series; empty when it returns none. */
    public java.util.OptionalDouble value(String promql) throws IOException, InterruptedException {
        JsonNode result = query(promql).path("result");
        if (result.size() == 0) {
            return java.util.OptionalDouble.empty();
        }
        if (result.size() > 1) {
            throw new IllegalStateException(promql + " returned " + result.size() + " series: " + result);
        }
        return java.util.OptionalDouble.of(Double.parseDouble(result.get(0).path("value").get(1).asText()));
    }

    /** Names of every metric Prometheus has stored. */
    public List<String> metricNames() throws IOException, InterruptedException {
        JsonNode body = JSON.readTree(get("/api/v1/label/__name__/values").body());
        List<String> names = new java.util.ArrayList<>();
        body.path("data").forEach(n -> names.add(n.asText()));
        return names;
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
