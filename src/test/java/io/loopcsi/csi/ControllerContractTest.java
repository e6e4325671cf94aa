package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import csi.v1.CapacityRange;
import csi.v1.ControllerGetCapabilitiesRequest;
import csi.v1.ControllerGetVolumeRequest;
import csi.v1.ControllerServiceCapability.RPC.Type;
import csi.v1.CreateVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.GetCapacityResponse;
import csi.v1.ListVolumesRequest;
import csi.v1.ListVolumesResponse;
import csi.v1.Topology;
import csi.v1.TopologyRequirement;
import csi.v1.ValidateVolumeCapabilitiesRequest;
import csi.v1.ValidateVolumeCapabilitiesResponse;
import csi.v1.Volume;
import io.grpc.Status;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** Controller semantics that need no mount: idempotency, sizing, paging, capacity, validation. */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class ControllerContractTest extends CsiTestBase {

    @Test
    void sameNameSameRequestIsTheSameVolumeAndAnIncompatibleOneIsRefused() {
        Volume first = csi.controller.createVolume(Csi.create("cc-idem", Csi.block(), 10 * Csi.MIB)).getVolume();
        volumes.add(first.getVolumeId());
        Volume again = csi.controller.createVolume(Csi.create("cc-idem", Csi.block(), 10 * Csi.MIB)).getVolume();
        assertEquals(first, again);
        assertEquals("test-node", first.getAccessibleTopology(0).getSegmentsOrThrow("topology.loopcsi.io/node"));
        assertCode(Status.Code.ALREADY_EXISTS, () -> csi.controller.createVolume(Csi.create("cc-idem", Csi.block(), 20 * Csi.MIB)));
        assertCode(Status.Code.ALREADY_EXISTS, () -> csi.controller.createVolume(Csi.create("cc-idem", Csi.mount("xfs"), 300 * Csi.MIB)));
    }

    @Test
    void parallelCreatesOfOneNameGiveOneVolumeAndIdenticalAnswers() throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(64);
        List<Volume> answers = new ArrayList<>();
        try {
            List<Future<Volume>> calls = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                calls.add(callers.submit(() -> csi.controller.createVolume(Csi.create("cc-race", Csi.block(), 8 * Csi.MIB)).getVolume()));
            }
            for (Future<Volume> f : calls) {
                answers.add(f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            callers.shutdownNow();
        }
        String id = answers.get(0).getVolumeId();
        volumes.add(id);
        assertEquals(1, answers.stream().distinct().count(), "64 identical answers");
        try (var files = Files.list(StandaloneDriverResource.dir().resolve("pool/volumes"))) {
            assertEquals(List.of(id + ".img", id + ".json"),
                    files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(id)).sorted().toList());
        }
    }

    @Test
    void capacityIsRoundedToWholeMiBAndXfsToItsMinimum() {
        Volume odd = csi.controller.createVolume(Csi.create("cc-odd", Csi.block(), 5 * Csi.MIB + 1)).getVolume();
        volumes.add(odd.getVolumeId());
        assertEquals(6 * Csi.MIB, odd.getCapacityBytes());
        Volume small = csi.controller.createVolume(Csi.create("cc-small-xfs", Csi.mount("xfs"), 20 * Csi.MIB)).getVolume();
        volumes.add(small.getVolumeId());
        assertEquals(300 * Csi.MIB, small.getCapacityBytes());
        Volume ext4 = csi.controller.createVolume(Csi.create("cc-ext4", Csi.mount("ext4"), 20 * Csi.MIB)).getVolume();
        volumes.add(ext4.getVolumeId());
        assertEquals(20 * Csi.MIB, ext4.getCapacityBytes());
        var e = assertCode(Status.Code.OUT_OF_RANGE, () -> csi.controller.createVolume(Csi.create("cc-xfs-limited", Csi.mount("xfs"), 0)
                .toBuilder().setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(100 * Csi.MIB).setLimitBytes(200 * Csi.MIB))
                .build()));
        assertTrue(e.getStatus().getDescription().contains("300Mi"), e.getStatus().getDescription());
    }

    @Test
    void capacityAccountsForEveryVolumeAndRefusesOvercommit() {
        long before = capacity().getAvailableCapacity();
        volumes.add(csi.controller.createVolume(Csi.create("cc-cap", Csi.block(), 1024 * Csi.MIB)).getVolume().getVolumeId());
        GetCapacityResponse after = capacity();
        assertEquals(before - 1024 * Csi.MIB, after.getAvailableCapacity());
        assertEquals(after.getAvailableCapacity() / Csi.MIB * Csi.MIB, after.getMaximumVolumeSize().getValue());
        var e = assertCode(Status.Code.RESOURCE_EXHAUSTED,
                () -> csi.controller.createVolume(Csi.create("cc-too-big", Csi.block(), after.getAvailableCapacity() + Csi.MIB)));
        assertTrue(e.getStatus().getDescription().contains("available"), e.getStatus().getDescription());
        assertCode(Status.Code.NOT_FOUND, () -> csi.controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                .setVolumeId("vol-00000000000000000000000000000000").build()));
        assertEquals(after.getAvailableCapacity(), capacity().getAvailableCapacity(), "a refused create allocates nothing");
        GetCapacityResponse elsewhere = csi.controller.getCapacity(GetCapacityRequest.newBuilder()
                .setAccessibleTopology(Topology.newBuilder().putSegments("topology.loopcsi.io/node", "other-node")).build());
        assertEquals(0, elsewhere.getAvailableCapacity());
    }

    @Test
    void aRequisiteTopologyWithoutThisNodeCannotBeMet() {
        CreateVolumeRequest req = Csi.create("cc-topo", Csi.block(), Csi.MIB).toBuilder()
                .setAccessibilityRequirements(TopologyRequirement.newBuilder()
                        .addRequisite(Topology.newBuilder().putSegments("topology.loopcsi.io/node", "other-node")))
                .build();
        assertCode(Status.Code.RESOURCE_EXHAUSTED, () -> csi.controller.createVolume(req));
        CreateVolumeRequest here = Csi.create("cc-topo-here", Csi.block(), Csi.MIB).toBuilder()
                .setAccessibilityRequirements(TopologyRequirement.newBuilder()
                        .addRequisite(Topology.newBuilder().putSegments("topology.loopcsi.io/node", "test-node")))
                .build();
        volumes.add(csi.controller.createVolume(here).getVolume().getVolumeId());
    }

    @Test
    void listVolumesPagesThroughEveryVolumeOnce() {
        for (int i = 0; i < 5; i++) {
            volumes.add(csi.controller.createVolume(Csi.create("cc-page-" + i, Csi.block(), Csi.MIB)).getVolume().getVolumeId());
        }
        List<String> seen = new ArrayList<>();
        String token = "";
        int pages = 0;
        do {
            ListVolumesResponse page = csi.controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(2).setStartingToken(token).build());
            assertTrue(page.getEntriesCount() <= 2);
            page.getEntriesList().forEach(e -> {
                seen.add(e.getVolume().getVolumeId());
                assertFalse(e.getStatus().getVolumeCondition().getAbnormal());
            });
            token = page.getNextToken();
            pages++;
        } while (!token.isEmpty() && pages < 100);
        assertTrue(seen.containsAll(volumes), "every volume listed");
        assertEquals(seen.size(), seen.stream().distinct().count(), "no volume listed twice");
        assertEquals(seen.stream().sorted().toList(), seen);
        assertCode(Status.Code.ABORTED, () -> csi.controller.listVolumes(ListVolumesRequest.newBuilder().setStartingToken("bogus/../x").build()));
        assertCode(Status.Code.INVALID_ARGUMENT, () -> csi.controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(-1).build()));
    }

    @Test
    void validateConfirmsMatchingCapabilitiesOnly() {
        String id = createVolume("cc-validate", Csi.mount("xfs"), 300 * Csi.MIB);
        ValidateVolumeCapabilitiesResponse ok = csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId(id).addVolumeCapabilities(Csi.mount("xfs")).addVolumeCapabilities(Csi.mount("")).build());
        assertTrue(ok.hasConfirmed());
        ValidateVolumeCapabilitiesResponse no = csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId(id).addVolumeCapabilities(Csi.block()).build());
        assertFalse(no.hasConfirmed());
        assertTrue(no.getMessage().contains("FILESYSTEM"), no.getMessage());
        assertFalse(csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId(id).addVolumeCapabilities(Csi.mount("ext4")).build()).hasConfirmed());
        assertCode(Status.Code.NOT_FOUND, () -> csi.controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId("vol-0123456789abcdef0123456789abcdef").addVolumeCapabilities(Csi.block()).build()));
    }

    @Test
    void advertisesTheControllerCapabilities() {
        List<Type> caps = csi.controller.controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList().stream().map(c -> c.getRpc().getType()).toList();
        assertTrue(caps.containsAll(List.of(Type.CREATE_DELETE_VOLUME, Type.LIST_VOLUMES, Type.GET_CAPACITY, Type.EXPAND_VOLUME,
                Type.CREATE_DELETE_SNAPSHOT, Type.LIST_SNAPSHOTS, Type.CLONE_VOLUME, Type.GET_VOLUME, Type.VOLUME_CONDITION, Type.MODIFY_VOLUME)),
                caps.toString());
        assertFalse(caps.contains(Type.PUBLISH_UNPUBLISH_VOLUME));
    }

    private static GetCapacityResponse capacity() {
        return csi.controller.getCapacity(GetCapacityRequest.getDefaultInstance());
    }
}
