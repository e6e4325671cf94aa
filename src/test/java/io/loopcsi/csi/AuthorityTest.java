package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import csi.v1.GetPluginInfoRequest;
import csi.v1.GetPluginInfoResponse;
import csi.v1.ListVolumesRequest;
import csi.v1.ListVolumesResponse;
import csi.v1.ProbeRequest;
import csi.v1.ProbeResponse;
import io.loopcsi.csi.Endpoint;
import io.loopcsi.testing.RawGrpc;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Every {@code :authority} a CSI client may send on a unix socket is served: the socket path as
 * grpc-go clients that dial a path send it (GoCSI's csc, kubelets of that generation), with a
 * leading slash, {@code localhost}, empty, or none at all. The requests are real HTTP/2 frames
 * written by {@link RawGrpc}, so no client library rewrites the authority on the way.
 */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class AuthorityTest extends CsiTestBase {

    static List<String> authorities() {
        String sock = StandaloneDriverResource.socket().toString();
        return Arrays.asList(sock.substring(1), sock, "tmp/x/csi.sock", "localhost", "localhost:0", "unix://" + sock, "", null);
    }

    @Test
    void unaryCallsAreServedWhateverTheAuthority() throws Exception {
        try (RawGrpc raw = new RawGrpc(Endpoint.parse("unix://" + StandaloneDriverResource.socket()))) {
            for (String authority : authorities()) {
                RawGrpc.Reply info = raw.call("csi.v1.Identity/GetPluginInfo", GetPluginInfoRequest.getDefaultInstance(), authority);
                assertEquals(-1, info.rstCode(), "stream reset for :authority " + authority);
                assertEquals(0, info.grpcStatus(), ":authority " + authority + ": " + info.grpcMessage());
                assertEquals("loopcsi.io", info.message(GetPluginInfoResponse.parser()).getName());
                RawGrpc.Reply probe = raw.call("csi.v1.Identity/Probe", ProbeRequest.getDefaultInstance(), authority);
                assertEquals(0, probe.grpcStatus(), ":authority " + authority + ": " + probe.grpcMessage());
                assertTrue(probe.message(ProbeResponse.parser()).getReady().getValue());
            }
        }
    }

    @Test
    void aLargeReplyFlowsThroughManyDataFramesAndWindowUpdates() throws Exception {
        int n = 800;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> made = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String name = "authority-many-" + i;
                made.add(pool.submit(() -> csi.controller.createVolume(Csi.create(name, Csi.block(), Csi.MIB)).getVolume().getVolumeId()));
            }
            for (Future<String> f : made) {
                volumes.add(f.get());
            }
        } finally {
            pool.shutdown();
        }
        try (RawGrpc raw = new RawGrpc(Endpoint.parse("unix://" + StandaloneDriverResource.socket()))) {
            RawGrpc.Reply r = raw.call("csi.v1.Controller/ListVolumes", ListVolumesRequest.getDefaultInstance(), "tmp/x/csi.sock");
            assertEquals(0, r.grpcStatus(), r.grpcMessage());
            Set<String> listed = new HashSet<>();
            r.message(ListVolumesResponse.parser()).getEntriesList().forEach(e -> listed.add(e.getVolume().getVolumeId()));
            assertTrue(listed.containsAll(volumes), "every volume listed");
            assertTrue(r.body().length > 65_535, "reply larger than HTTP/2's initial windows: " + r.body().length + " bytes");
            assertTrue(r.dataFrames() >= r.body().length / 16_384, r.dataFrames() + " DATA frames");
            assertTrue(raw.windowUpdatesSent.get() >= 3, raw.windowUpdatesSent.get() + " WINDOW_UPDATEs sent");
            System.out.printf("ListVolumes of %d volumes: %d bytes in %d DATA frames, %d WINDOW_UPDATEs%n", n, r.body().length,
                    r.dataFrames(), raw.windowUpdatesSent.get());
        }
    }
}
