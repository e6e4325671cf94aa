package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.loopcsi.csi.Endpoint;

class LauncherTest {

    @TempDir
    Path dir;

    @Test
    void endpointsParseAsCsiToolsWriteThem() {
        assertEquals(Path.of("/tmp/x.sock"), Endpoint.parse("unix:///tmp/x.sock").socket());
        assertEquals(Path.of("/tmp/x.sock"), Endpoint.parse("/tmp/x.sock").socket());
        assertEquals(Path.of("run/csi.sock").toAbsolutePath(), Endpoint.parse("unix://./run/csi.sock").socket());
        Endpoint tcp = Endpoint.parse("tcp://127.0.0.1:10000");
        assertEquals("127.0.0.1", tcp.host());
        assertEquals(10000, tcp.port());
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("tcp://127.0.0.1"));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("tcp://h:99999"));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("http://x"));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse(""));
    }

    @Test
    void aStaleSocketIsReplacedALiveOneAndOtherFilesAreRefused() throws IOException {
        Path sock = dir.resolve("sub/csi.sock");
        io.loopcsi.csi.PrivateSocket.prepare(sock);
        assertTrue(Files.isDirectory(sock.getParent()), "the socket's directory is made");

        try (ServerSocketChannel live = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            live.bind(UnixDomainSocketAddress.of(sock));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> io.loopcsi.csi.PrivateSocket.prepare(sock));
            assertTrue(e.getMessage().contains("another process"), e.getMessage());
        }
        // closing a bound unix server channel leaves its file behind: a stale socket
        assertTrue(Files.exists(sock));
        io.loopcsi.csi.PrivateSocket.prepare(sock);
        assertFalse(Files.exists(sock), "stale socket removed");

        Files.writeString(sock, "not a socket");
        assertThrows(IllegalStateException.class, () -> io.loopcsi.csi.PrivateSocket.prepare(sock));
        assertEquals("not a socket", Files.readString(sock));
    }

    @Test
    void flagsTakeTheirValueAfterASpaceOrAnEqualsSign() {
        var v = Flags.parse("standalone", java.util.List.of("--data-dir", "/x", "--capacity=5Gi", "--endpoint=unix:///a=b.sock", "--debug"));
        assertEquals(java.util.Map.of("--data-dir", "/x", "--capacity", "5Gi", "--endpoint", "unix:///a=b.sock"), v.given());
        assertTrue(v.has("--debug"));
        assertEquals("5Gi", v.properties().get("loopcsi.capacity"));
        var op = Main.operatorProperties(Flags.parse("operator", java.util.List.of("--namespace", "ns1", "--http-address=127.0.0.1:9000")));
        assertEquals("ns1", op.get("loopcsi.operator.namespace"));
        assertEquals("9000", op.get("quarkus.http.port"));
        assertEquals("operator", op.get("loopcsi.role"));
    }

    @Test
    void csiEndpointsAreServedByTheCsiServerAndQuarkusHttpListensNowhere() {
        var p = Main.csiProperties(Endpoint.parse("unix:///tmp/a.sock"));
        assertEquals("unix:///tmp/a.sock", p.get("loopcsi.endpoint"));
        assertEquals("false", p.get("quarkus.http.host-enabled"));
        assertEquals("false", p.get("quarkus.http.domain-socket-enabled"));
        var t = Main.csiProperties(Endpoint.parse("tcp://127.0.0.1:4000"));
        assertEquals("tcp://127.0.0.1:4000", t.get("loopcsi.endpoint"));
        assertEquals("false", t.get("quarkus.http.host-enabled"));
    }

    @Test
    void theOperatorRoleServesHttpOnTcpAndNamesItsNamespace() {
        var p = Main.operatorProperties(Flags.parse("operator", java.util.List.of("--namespace", "storage", "--http-address=127.0.0.1:9000")));
        assertEquals("operator", p.get("loopcsi.role"));
        assertEquals("storage", p.get("loopcsi.operator.namespace"));
        assertEquals("true", p.get("quarkus.http.host-enabled"));
        assertEquals("9000", p.get("quarkus.http.port"));
        assertEquals("0.0.0.0", Main.operatorProperties(Flags.parse("operator", java.util.List.of())).get("quarkus.http.host"));
    }
}
