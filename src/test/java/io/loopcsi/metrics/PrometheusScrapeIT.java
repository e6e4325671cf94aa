package io.loopcsi.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import csi.v1.CapacityRange;
import csi.v1.CreateVolumeRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.VolumeCapability;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.Data;
import io.loopcsi.testing.DriverProcess;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.PrometheusProcess;

/**
 * The packaged standalone driver with {@code --metrics-address}, scraped by a real Prometheus:
 * volumes made, staged, written, one refused call and one damaged image, then Prometheus' HTTP
 * API (not the driver) must hold the series and values those actions imply.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PrometheusScrapeIT {

    static final long MIB = 1 << 20;
    Path dir;
    DriverProcess driver;
    PrometheusProcess prometheus;
    String metricsAddress;

    @BeforeAll
    void start() throws Exception {
        dir = Files.createTempDirectory("loopcsi-metrics-").toRealPath();
        metricsAddress = "127.0.0.1:" + PrometheusProcess.freePort();
        driver = DriverProcess.startWithFlags(dir, List.of("--metrics-address", metricsAddress, "--thin-overcommit", "2",
                "--host-reserve", "1Mi"));
        prometheus = PrometheusProcess.start(dir, metricsAddress, "/q/metrics");
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (prometheus != null) {
                prometheus.close();
            }
            if (driver != null) {
                driver.close();
            }
        } finally {
            KernelCleanup.releaseAndDelete(dir);
        }
    }

    @Test
    @Order(1)
    void prometheusSeesThePoolTheCallsAndTheErrors() throws Exception {
        String blockId;
        Status.Code refused;
        try (CsiClient csi = driver.client()) {
            blockId = csi.controller.createVolume(create("m-block", block(), 64 * MIB)).getVolume().getVolumeId();
            String xfsId = csi.controller.createVolume(create("m-xfs", mount("xfs"), 300 * MIB)).getVolume().getVolumeId();
            csi.controller.createVolume(create("m-xfs", mount("xfs"), 300 * MIB)); // a retry: same volume, counted as a call
            Path staging = Files.createDirectories(dir.resolve("staging"));
            Path target = dir.resolve("target");
            csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(xfsId).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(mount("xfs")).build());
            csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(xfsId).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(mount("xfs")).build());
            Path file = target.resolve("data");
            Files.write(file, Data.randomBytes((int) (32 * MIB), 12));
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                f.getFD().sync();
            }
            // induced error: more than the pool holds (20Gi)
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> csi.controller.createVolume(create("m-huge", block(), 100L << 30)));
            refused = e.getStatus().getCode();
        }
        // damage: the block volume's image loses its tail, its condition becomes abnormal
        try (RandomAccessFile img = new RandomAccessFile(dir.resolve("pool/volumes/" + blockId + ".img").toFile(), "rw")) {
            img.setLength(32 * MIB);
        }

        await("loopcsi_csi_requests_total{method=\"CreateVolume\",code=\"OK\"}", 3);
        await("loopcsi_csi_requests_total{method=\"CreateVolume\",code=\"" + refused.name() + "\"}", 1);
        await("loopcsi_csi_requests_total{service=\"Node\",method=\"NodeStageVolume\",code=\"OK\"}", 1);
        await("loopcsi_csi_requests_total{method=\"NodePublishVolume\",code=\"OK\"}", 1);
        await("loopcsi_csi_request_duration_seconds_count{method=\"CreateVolume\"}", 4);
        await("sum(loopcsi_csi_requests_total{code!=\"OK\"})", 1);
        await("loopcsi_command_duration_seconds_count{command=\"mkfs.xfs\"}", 1);
        await("loopcsi_volumes_abnormal", 1);
        await("loopcsi_pool_allocated_bytes{driver=\"loopcsi.io\",node=\"it-node\"}", 364 * MIB);
        await("loopcsi_pool_capacity_bytes", 20L << 30);
        // --thin-overcommit 2: the thin volumes' 364Mi are charged half (issue 24); --host-reserve 1Mi is reported as given
        await("loopcsi_pool_charged_bytes{driver=\"loopcsi.io\",node=\"it-node\"}", 182 * MIB);
        await("loopcsi_pool_host_reserve_bytes", MIB);
        await("loopcsi_volumes{mode=\"filesystem\",fs_type=\"xfs\"}", 1);
        await("loopcsi_volumes{mode=\"block\",fs_type=\"none\"}", 1);
        await("loopcsi_volumes{fs_type=\"ext4\"}", 0);
        await("loopcsi_snapshots", 0);
        await("loopcsi_loop_devices_attached", 1);
        await("loopcsi_volumes_buffered", 0); // the staged volume does direct I/O on this host
        // the images really hold the 32 MiB written (plus xfs' metadata), far less than allocated
        double used = awaitPresent("loopcsi_pool_used_bytes");
        assertTrue(used >= 32 * MIB && used < 200 * MIB, "used bytes " + used);
        double promised = awaitPresent("loopcsi_pool_host_promised_bytes");
        assertEquals(364 * MIB, used + promised, 1, "used + promised = allocated (no snapshots, no create in flight)");
        double free = awaitPresent("loopcsi_pool_host_free_bytes");
        assertEquals(Files.getFileStore(dir).getUsableSpace(), free, 512 * MIB, "host free");
        assertEquals(0, awaitPresent("sum(loopcsi_command_failures_total)"), "no command failed");

        // CSI is never served on the metrics address
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + metricsAddress
                + "/csi.v1.Identity/Probe")).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(404, r.statusCode());
    }

    /**
     * Every query of the dashboard (panels and variables) parses in this Prometheus, and every
     * driver metric it names is in the scrape (after the test above made volumes and calls); the
     * operator's are checked in its own scrape (PackagedOperatorIT).
     */
    @Test
    @Order(2)
    void everyDashboardQueryParsesAndItsMetricsAreScraped() throws Exception {
        List<DashboardQueries.Query> queries = DashboardQueries.all();
        assertTrue(queries.size() >= 20, "queries found: " + queries);
        List<String> scraped = prometheus.metricNames();
        for (DashboardQueries.Query q : queries) {
            prometheus.query(q.concrete()); // throws with Prometheus' parse error
            if (!q.operator()) {
                for (String metric : q.metrics()) {
                    if (metric.startsWith("loopcsi_transfer")) {
                        continue; // the node role's transfers between nodes (none standalone): PoolServesVolumesKubeIT scrapes a node's
                    }
                    assertTrue(scraped.contains(metric), metric + " (in " + q.promql() + ") is not in the driver's scrape");
                }
            }
        }
    }

    /** Waits (up to 30 s of scrapes) until the query's one series has the value. */
    void await(String promql, double expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        OptionalDouble v = OptionalDouble.empty();
        while (System.nanoTime() < deadline) {
            v = prometheus.value(promql);
            if (v.isPresent() && v.getAsDouble() == expected) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError(promql + ": expected " + expected + ", Prometheus has " + v + "\ndriver log:\n" + driver.log());
    }

    double awaitPresent(String promql) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            OptionalDouble v = prometheus.value(promql);
            if (v.isPresent()) {
                return v.getAsDouble();
            }
            Thread.sleep(500);
        }
        throw new AssertionError(promql + ": no series in Prometheus");
    }

    static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance()).setAccessMode(writer()).build();
    }

    static VolumeCapability mount(String fs) {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType(fs)).setAccessMode(writer()).build();
    }

    static VolumeCapability.AccessMode writer() {
        return VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER).build();
    }

    static CreateVolumeRequest create(String name, VolumeCapability cap, long bytes) {
        return CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(cap)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes)).build();
    }
}
