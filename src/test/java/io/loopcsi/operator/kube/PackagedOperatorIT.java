package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.loopcsi.metrics.DashboardQueries;
import io.loopcsi.operator.OperatorRole;
import io.loopcsi.operator.StoragePoolReconciler;

/**
 * The packaged operator ({@code ./loopcsi operator}, as the README runs it) against a kube-testenv
 * API server of this test's own: its shutdown, and its metrics.
 *
 * <p>Kubelets and OLM stop the operator with SIGTERM and wait for its shutdown timeout before they
 * SIGKILL it. The operator must exit within that timeout, with the API server
 * up and after it went away. (Before the fix it hung: JOSDK's System.exit on the lease ending,
 * called inside Quarkus' shutdown, waited on that shutdown forever.) And an operator whose lease
 * another replica took must still stop by itself.
 *
 * <p>Runs with LOOPCSI_KUBE_TEST=1 and kube-testenv beside the clone (make test / .ci/run).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PackagedOperatorIT {

    static final String NS = "loopcsi-system";
    /** 128 + SIGTERM: the JVM's status after a SIGTERM-initiated shutdown. */
    static final int SIGTERM_EXIT = 143;
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    static ThrowawayCluster cluster;
    Process operator;
    Path log;
    int port;

    @BeforeAll
    static void cluster() throws Exception {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && ThrowawayCluster.tool() != null;
        if (!configured) {
            System.out.println("SKIPPED PackagedOperatorIT: needs LOOPCSI_KUBE_TEST=1 and ../shared/tools/kube-testenv (make test-kube)");
        }
        assumeTrue(configured, "no kube-testenv: run make test-kube");
        cluster = ThrowawayCluster.up();
        cluster.kubectl("apply", "-k", "kubernetes/");
    }

    @AfterEach
    void kill() {
        if (operator != null && operator.isAlive()) {
            operator.destroyForcibly();
        }
    }

    @AfterAll
    static void down() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void exitsWithinTheShutdownTimeoutOnSigtermWhileTheApiServerServes() throws Exception {
        startOperator();
        Duration took = terminate();
        System.out.printf("PackagedOperatorIT: SIGTERM with the API server up: exited in %d ms%n", took.toMillis());
    }

    /** Another replica holds the lease now: this one must stop reconciling, i.e. exit (its kubelet restarts it). */
    @Test
    @Order(2)
    void exitsByItselfWhenAnotherReplicaTookTheLease() throws Exception {
        startOperator();
        String now = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC).format(Instant.now());
        cluster.kubectl("patch", "lease", "-n", NS, "loopcsi-operator", "--type", "merge", "-p",
                "{\"spec\": {\"holderIdentity\": \"another-replica\", \"renewTime\": \"" + now + "\", \"leaseDurationSeconds\": 120}}");
        assertTrue(operator.waitFor(60, TimeUnit.SECONDS), "still running 60 s after losing its lease: " + log());
        assertEquals(OperatorRole.LOST_LEASE_EXIT, operator.exitValue(), log());
        assertTrue(log().contains("lost the leader-election lease"), log());
    }

    /**
     * Every operator series the Grafana dashboard queries is in the operator's /q/metrics, with the
     * pool label the dashboard selects by, once it reconciled pools as they go in real life: one that
     * rolls out, one refused (BackingDirConflict: a problem reported in status and counted), and
     * reconciles that throw (its ClusterRole lost the PersistentVolume rule: JOSDK counts them
     * failed). It runs as its ServiceAccount (impersonated), so with the committed RBAC; the example
     * pool's dashboard ConfigMap is written by it too.
     */
    @Test
    @Order(3)
    void itsMetricsHoldEveryOperatorSeriesTheDashboardQueries() throws Exception {
        startOperator(Map.of("KUBERNETES_IMPERSONATE_USERNAME", "system:serviceaccount:" + NS + ":loopcsi-operator"));
        cluster.kubectl("apply", "-f", "kubernetes/examples/storagepool.yaml");
        await("pool local reconciled", () -> "1".equals(cluster.kubectl("get", "storagepool", "local", "-o",
                "jsonpath={.status.observedGeneration}")));
        await("the example pool's Grafana dashboard ConfigMap", () -> !cluster.kubectl("get", "configmap", "-n", NS,
                "loopcsi-local-dashboard", "--ignore-not-found", "-o", "name").isBlank());
        // younger than local (and after it by name, should both be made in one second): the one refused
        Path overlap = dir.resolve("overlap.yaml");
        Files.writeString(overlap, """
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: overlap}
                spec: {capacityPerNode: 1Gi, backingDir: /var/lib/loopcsi/local/overlap}
                """);
        cluster.kubectl("apply", "-f", overlap.toString());
        await("pool overlap refused", () -> "BackingDirConflict".equals(cluster.kubectl("get", "storagepool", "overlap", "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}")));

        String role = cluster.kubectl("get", "clusterrole", StoragePoolReconciler.NAME + "-cluster-role", "-o", "json");
        ObjectNode broken = (ObjectNode) JSON.readTree(role);
        for (java.util.Iterator<JsonNode> rules = broken.withArray("rules").iterator(); rules.hasNext();) {
            if (rules.next().path("resources").toString().contains("\"persistentvolumes\"")) {
                rules.remove();
            }
        }
        replace(broken);
        try {
            await("a reconcile that threw, counted by JOSDK", () -> scrape().lines().anyMatch(l -> l.startsWith(
                    "operator_sdk_reconciliations_failed_total{")));
            String metrics = scrape();
            Set<String> scraped = metrics.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).map(l -> l.split("[{ ]", 2)[0])
                    .collect(Collectors.toSet());
            int checked = 0;
            for (DashboardQueries.Query q : DashboardQueries.all()) {
                if (!q.operator()) {
                    continue;
                }
                for (String metric : q.metrics()) {
                    assertTrue(scraped.contains(metric), metric + " (in " + q.promql() + ") is not in the operator's scrape:\n" + metrics);
                    String label = q.poolLabels().get(metric);
                    assertTrue(label != null, "the dashboard selects " + metric + " by no pool label: " + q.promql());
                    assertTrue(metrics.lines().anyMatch(l -> l.startsWith(metric + "{") && (l.contains(label + "=\"local\"")
                            || l.contains(label + "=\"overlap\""))), metric + " has no series with " + label + "=<pool> (in " + q.promql()
                                    + "):\n" + metrics);
                    checked++;
                }
            }
            assertTrue(checked >= 8, "operator series the dashboard queries: " + checked);
        } finally {
            replace((ObjectNode) JSON.readTree(role));
        }
    }

    @Test
    @Order(5)
    void exitsWithinTheShutdownTimeoutOnSigtermAfterTheApiServerWentAway() throws Exception {
        startOperator();
        cluster.down();
        Duration took = terminate();
        System.out.printf("PackagedOperatorIT: SIGTERM after the API server went away: exited in %d ms%n", took.toMillis());
    }

    /**
     * Two operators, as in a rollout: the second waits while the first leads; the first stopped
     * gracefully (SIGTERM) releases the Lease, and the second leads within 5 s (before the release,
     * it waited for the Lease to expire: 30 s). Before the test that takes the API server away.
     */
    @Test
    @Order(4)
    void aSuccessorLeadsWithinSecondsOfAGracefulStop() throws Exception {
        startOperator();
        String first = cluster.kubectl("get", "lease", "-n", NS, "loopcsi-operator", "-o", "jsonpath={.spec.holderIdentity}");
        Path secondLog = dir.resolve("second.log");
        int secondPort;
        try (ServerSocket s = new ServerSocket(0)) {
            secondPort = s.getLocalPort();
        }
        ProcessBuilder pb = new ProcessBuilder("./loopcsi", "operator", "--namespace", NS, "--http-address", "127.0.0.1:" + secondPort)
                .redirectErrorStream(true).redirectOutput(secondLog.toFile());
        pb.environment().put("KUBECONFIG", cluster.kubeconfig.toString());
        Process second = pb.start();
        try {
            // the second one is up and a candidate: it tries the Lease every 2 s and finds it held
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            // JOSDK started (its elector with it): a slow start of the second JVM is not the hand-over's time
            while (!Files.readString(secondLog).contains("Starting 'loopcsi-storagepool' controller")) {
                assertTrue(second.isAlive(), "the second operator exited: " + Files.readString(secondLog));
                assertTrue(System.nanoTime() < deadline, "the second operator did not start: " + Files.readString(secondLog));
                Thread.sleep(200);
            }
            Thread.sleep(6000);
            assertFalse(Files.readString(secondLog).contains("Started event processing"), "only one leads: " + Files.readString(secondLog));
            assertEquals(first, cluster.kubectl("get", "lease", "-n", NS, "loopcsi-operator", "-o", "jsonpath={.spec.holderIdentity}"));

            terminate();
            long stopped = System.nanoTime();
            while (!Files.readString(secondLog).contains("Started event processing")) {
                assertTrue(second.isAlive(), "the second operator exited: " + Files.readString(secondLog));
                assertTrue(System.nanoTime() - stopped < TimeUnit.SECONDS.toNanos(5),
                        "the successor does not lead within 5 s of the first one's exit: " + Files.readString(secondLog) + "\nfirst:\n" + log());
                Thread.sleep(100);
            }
            System.out.printf("PackagedOperatorIT: the successor led %d ms after the first one exited%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped));
            assertTrue(log().contains("leader-election lease released"), log());
            String now = cluster.kubectl("get", "lease", "-n", NS, "loopcsi-operator", "-o", "jsonpath={.spec.holderIdentity}");
            assertFalse(now.isBlank() || now.equals(first), "the second one holds the Lease: " + now);
        } finally {
            second.destroyForcibly();
            second.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private void startOperator() throws Exception {
        startOperator(Map.of());
    }

    private void startOperator(Map<String, String> env) throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // the lease of an operator killed before: free it at once rather than wait for it to expire
        cluster.kubectl("delete", "lease", "-n", NS, "loopcsi-operator", "--ignore-not-found");
        log = dir.resolve("operator.log");
        ProcessBuilder pb = new ProcessBuilder("./loopcsi", "operator", "--namespace", NS, "--http-address", "127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("KUBECONFIG", cluster.kubeconfig.toString());
        pb.environment().putAll(env);
        operator = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!log().contains("Started event processing")) {
            assertTrue(operator.isAlive(), "the operator exited at start: " + log());
            assertTrue(System.nanoTime() < deadline, "the operator did not lead and reconcile within 120 s: " + log());
            Thread.sleep(200);
        }
        String lease = cluster.kubectl("get", "lease", "-n", NS, "loopcsi-operator", "-o", "jsonpath={.spec.holderIdentity}");
        assertFalse(lease.isBlank(), "the operator holds its lease");
    }

    /** The operator's /q/metrics. */
    private String scrape() {
        try {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/q/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** kubectl replace of a cluster-scoped object as read with kubectl get -o json (its resourceVersion dropped). */
    private void replace(ObjectNode object) throws IOException {
        ((ObjectNode) object.path("metadata")).remove("resourceVersion");
        Path f = dir.resolve("replace.json");
        Files.writeString(f, JSON.writeValueAsString(object));
        cluster.kubectl("replace", "-f", f.toString());
    }

    /** Polls (every 500 ms, up to 90 s) until the check holds; the operator must stay up meanwhile. */
    private void await(String what, BooleanSupplier check) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!check.getAsBoolean()) {
            assertTrue(operator.isAlive(), "the operator exited: " + log());
            assertTrue(System.nanoTime() < deadline, "timed out waiting for: " + what + "\n" + log());
            Thread.sleep(500);
        }
    }

    /** SIGTERM; asserts the exit within quarkus.shutdown.timeout and returns how long it took. */
    private Duration terminate() throws Exception {
        Duration timeout = shutdownTimeout();
        long t0 = System.nanoTime();
        operator.destroy();
        boolean exited = operator.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertTrue(exited, "still running " + timeout.toSeconds() + " s (quarkus.shutdown.timeout) after SIGTERM: " + log());
        assertEquals(SIGTERM_EXIT, operator.exitValue(), "a SIGTERM shutdown, not a lost-lease exit: " + log());
        assertTrue(log().contains("is shutting down"), log());
        return took;
    }

    static Duration shutdownTimeout() throws IOException {
        Properties p = new Properties();
        try (var in = Files.newInputStream(Path.of("src/main/resources/application.properties"))) {
            p.load(in);
        }
        String v = p.getProperty("quarkus.shutdown.timeout");
        assertTrue(v != null && v.endsWith("s"), "quarkus.shutdown.timeout in seconds: " + v);
        return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
    }

    private String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
