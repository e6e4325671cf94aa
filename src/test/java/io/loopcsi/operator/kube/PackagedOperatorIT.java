package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import io.loopcsi.operator.OperatorRole;

/**
 * Kubelets and OLM stop the operator with SIGTERM and wait for its shutdown timeout before they
 * SIGKILL it. The packaged launcher ({@code ./loopcsi operator}, as the README runs it) against
 * a kube-testenv API server of this test's own must exit within that timeout, with the API server
 * up and after it went away. (Before the fix it hung: JOSDK's System.exit on the lease ending,
 * called inside Quarkus' shutdown, waited on that shutdown forever.) And an operator whose lease
 * another replica took must still stop by itself.
 *
 * <p>Runs with LOOPCSI_KUBE_TEST=1 and kube-testenv beside the clone (make test / .ci/run).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorShutdownIT {

    static final String NS = "loopcsi-system";
    /** 128 + SIGTERM: the JVM's status after a SIGTERM-initiated shutdown. */
    static final int SIGTERM_EXIT = 143;

    @TempDir
    Path dir;
    static ThrowawayCluster cluster;
    Process operator;
    Path log;

    @BeforeAll
    static void cluster() throws Exception {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && ThrowawayCluster.tool() != null;
        if (!configured) {
            System.out.println("SKIPPED OperatorShutdownIT: needs LOOPCSI_KUBE_TEST=1 and ../shared/tools/kube-testenv (make test-kube)");
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
        System.out.printf("OperatorShutdownIT: SIGTERM with the API server up: exited in %d ms%n", took.toMillis());
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

    @Test
    @Order(3)
    void exitsWithinTheShutdownTimeoutOnSigtermAfterTheApiServerWentAway() throws Exception {
        startOperator();
        cluster.down();
        Duration took = terminate();
        System.out.printf("OperatorShutdownIT: SIGTERM after the API server went away: exited in %d ms%n", took.toMillis());
    }

    private void startOperator() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // the lease of an operator killed before: free it at once rather than wait for it to expire
        cluster.kubectl("delete", "lease", "-n", NS, "loopcsi-operator", "--ignore-not-found");
        log = dir.resolve("operator.log");
        ProcessBuilder pb = new ProcessBuilder("./loopcsi", "operator", "--namespace", NS, "--http-address", "127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("KUBECONFIG", cluster.kubeconfig.toString());
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
