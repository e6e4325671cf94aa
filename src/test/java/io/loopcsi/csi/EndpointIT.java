package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import csi.v1.GetPluginInfoRequest;
import csi.v1.GetPluginInfoResponse;
import csi.v1.ProbeRequest;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.DriverProcess;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.RawGrpc;

/**
 * The packaged driver serves both kinds of endpoint the launcher takes, to a gRPC library client
 * and to raw HTTP/2 requests carrying the {@code :authority} old grpc-go clients send.
 */
class EndpointIT {

    Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory("loopcsi-it-").toRealPath();
    }

    @AfterEach
    void cleanUp() {
        KernelCleanup.releaseAndDelete(dir);
    }

    @Test
    void aUnixSocketServesAPathAuthority() throws Exception {
        try (DriverProcess driver = DriverProcess.start(dir); RawGrpc raw = new RawGrpc(driver.endpoint)) {
            assertServed(raw, driver.socket.toString().substring(1));
            assertServed(raw, "tmp/x/csi.sock");
            int code = driver.terminate();
            assertTrue(code == 0 || code == 143, "orderly exit on SIGTERM, got " + code);
            assertTrue(!Files.exists(driver.socket), "socket removed at exit");
        }
    }

    /**
     * The pool's summary (every volume's metadata read, the capacity measured) is not on the path to
     * the first call: it is logged after the socket is published.
     */
    @Test
    void thePoolSummaryComesAfterTheSocketIsPublished() throws Exception {
        try (DriverProcess driver = DriverProcess.start(dir)) {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!driver.log().contains(" volumes, ") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            String log = driver.log();
            int published = log.indexOf("socket " + driver.socket + " published");
            int summary = log.indexOf("0 volumes, 0 snapshots");
            assertTrue(published >= 0 && summary > published, "published, then the summary:\n" + log);
        }
    }

    @Test
    void tcpKeepsWorking() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (DriverProcess driver = DriverProcess.startOn(dir, "tcp://127.0.0.1:" + port); CsiClient csi = driver.client();
                RawGrpc raw = new RawGrpc(driver.endpoint)) {
            assertTrue(csi.identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue());
            assertEquals("loopcsi.io", csi.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
            assertServed(raw, "127.0.0.1:" + port);
            assertServed(raw, "tmp/x/csi.sock");
        }
    }

    private static void assertServed(RawGrpc raw, String authority) throws Exception {
        RawGrpc.Reply r = raw.call("csi.v1.Identity/GetPluginInfo", GetPluginInfoRequest.getDefaultInstance(), authority);
        assertEquals(-1, r.rstCode(), "stream reset for :authority " + authority);
        assertEquals(0, r.grpcStatus(), ":authority " + authority + ": " + r.grpcMessage());
        assertEquals("loopcsi.io", r.message(GetPluginInfoResponse.parser()).getName());
    }
}
