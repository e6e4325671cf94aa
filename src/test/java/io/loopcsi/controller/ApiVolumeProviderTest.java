package io.loopcsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;

/**
 * The controller's API-backed provider against fabric8's mock API server in CRUD mode (with the
 * project's generated CRDs): the test plays the node's part by answering in the objects' status,
 * as the node role does. What a CO would notice: the same object for a retried call, the node's
 * gRPC code and message, a bounded wait, UNAVAILABLE for a silent node, placement by capacity.
 */
@EnableKubernetesMockClient(crud = true)
class ApiVolumeProviderTest {

    static final String POOL = "local";
    static final long GI = Sizes.GIB;

    KubernetesMockServer server;
    KubernetesClient client;
    ApiVolumeProvider provider;

    @BeforeEach
    void start() throws IOException {
        // the injected client gives up on a connection after 10 s, which a loaded CI machine can exceed
        client = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(
                client.getConfiguration()).withConnectionTimeout(60_000).withRequestTimeout(60_000).build()).build();
        for (String crd : List.of("loopvolumes", "loopsnapshots", "loopgroupsnapshots", "looppoolnodes", "looptransfers")) {
            try (InputStream in = Files.newInputStream(Path.of("crds", crd + ".loopcsi.io-v1.yml"))) {
                client.apiextensions().v1().customResourceDefinitions().load(in).create();
            }
        }
        provider = new ApiVolumeProvider(client, POOL, "local.loopcsi.io", Duration.ofSeconds(2), Duration.ofSeconds(60), Clock.systemUTC())
                .start();
    }

    @AfterEach
    void stop() {
        if (provider != null) {
            provider.close();
        }
        client.close();
    }

    @Test
    void createWritesTheIntentOnTheSelectedNodeAndReturnsTheNodesAnswer() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        node("node-b", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-1", GI), on("node-b")));
        LoopVolume lv = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-1")));
        assertEquals("node-b", lv.getSpec().getNode());
        assertEquals("node-b", lv.getMetadata().getLabels().get(HandoffNames.NODE_LABEL));
        assertEquals(POOL, lv.getMetadata().getLabels().get(HandoffNames.POOL_LABEL));
        assertFalse(call.isDone(), "the call waits for the node");
        answerReady(lv, GI);
        VolumeMeta v = call.get(10, TimeUnit.SECONDS);
        assertEquals(Ids.volumeIdFor("pvc-1"), v.id());
        assertEquals(GI, v.capacityBytes());
        assertEquals("node-b", provider.nodeOf(v.id()));

        // a retried call finds the same object and answers at once; another request under the name is refused
        assertEquals(v, provider.createVolume(xfs("pvc-1", GI), on("node-b")));
        assertEquals(1, client.resources(LoopVolume.class).list().getItems().size());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.createVolume(xfs("pvc-1", 5 * GI),
                on("node-b"))));
        assertEquals(Status.Code.ALREADY_EXISTS, e.getStatus().getCode());
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.createVolume(xfs("pvc-1", GI), on("node-a"))));
        assertEquals(Status.Code.ALREADY_EXISTS, e.getStatus().getCode(), "it is not accessible from the requisite topology");
        assertTrue(e.getStatus().getDescription().contains("lives on node node-b"), e.getStatus().getDescription());
        assertEquals(List.of(v), provider.volumes());
    }

    @Test
    void theConditionTheNodeReportsForAVolumeIsGetVolumesCondition() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-c", GI), on("node-a")));
        answerReady(awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-c"))), GI);
        String id = call.get(10, TimeUnit.SECONDS).id();
        assertFalse(provider.condition(id).abnormal());

        String why = "provisioning=thick: the image of " + id + " lacks blocks on the host filesystem and they cannot be allocated again";
        node("node-a", 10 * GI, Instant.now(), Map.of(id, why));
        assertEquals(why, await(() -> provider.condition(id).abnormal() ? provider.condition(id).message() : null));
        node("node-a", 10 * GI, Instant.now(), Map.of());
        await(() -> provider.condition(id).abnormal() ? null : true);
    }

    @Test
    void aNodesFailureSurfacesWithItsOwnCodeAndARetryTriesAgain() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-2", GI), on("node-a")));
        LoopVolume lv = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-2")));
        answer(lv, s -> {
            s.setPhase(Phase.FAILED);
            s.setCode("RESOURCE_EXHAUSTED");
            s.setMessage("not enough space on node node-a for 1Gi");
        });
        Throwable t = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS)).getCause();
        StatusRuntimeException e = (StatusRuntimeException) t;
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("not enough space on node node-a"), e.getStatus().getDescription());

        CompletableFuture<VolumeMeta> retry = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-2", GI), on("node-a")));
        LoopVolume again = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get();
            return x.getSpec().getAttempt() == 1 ? x : null;
        });
        assertTrue(again.getMetadata().getGeneration() > lv.getMetadata().getGeneration(), "a retry is a new generation for the node");
        answerReady(again, GI);
        assertEquals(GI, retry.get(10, TimeUnit.SECONDS).capacityBytes());
    }

    @Test
    void aNodeThatDoesNotAnswerGivesARetryableErrorNotAHang() {
        node("node-a", 10 * GI, Instant.now());
        long t0 = System.nanoTime();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> provider.createVolume(xfs("pvc-3", GI), on("node-a")));
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("node-a"), e.getStatus().getDescription());
        assertTrue(took >= 1900 && took < 8000, "bounded by the answer timeout (2s): " + took + " ms");
        assertNotNull(client.resources(LoopVolume.class).withName(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-3"))).get(),
                "the intent stays recorded for the node");

        // a node whose heartbeat is stale is not waited for at all
        node("node-a", 10 * GI, Instant.now().minusSeconds(600));
        t0 = System.nanoTime();
        e = assertThrows(StatusRuntimeException.class, () -> provider.createVolume(xfs("pvc-3", GI), on("node-a")));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("node-a"), e.getStatus().getDescription());
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 1900, "no wait for a silent node");
    }

    @Test
    void placementTakesTheFirstPreferredNodeWithRoomAndRefusesWhenNoneHasAny() throws Exception {
        node("node-a", 2 * GI, Instant.now());
        node("node-b", 8 * GI, Instant.now());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> provider.createVolume(xfs("big", 9 * GI),
                Placement.ANYWHERE));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("node-a: 2Gi available") && e.getStatus().getDescription().contains("node-b: 8Gi"),
                e.getStatus().getDescription());
        assertTrue(client.resources(LoopVolume.class).list().getItems().isEmpty(), "nothing written for a request no node can take");

        // preferred node-a has no room for 4Gi: the next allowed node is taken
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("mid", 4 * GI),
                new Placement(List.of("node-a", "node-b"), List.of("node-a", "node-b"))));
        LoopVolume lv = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("mid")));
        assertEquals("node-b", lv.getSpec().getNode());
        answerReady(lv, 4 * GI);
        call.get(10, TimeUnit.SECONDS);

        // GetCapacity per segment: what each node published; a stale node has none
        assertEquals(2 * GI, provider.capacity("node-a").availableBytes());
        node("node-a", 2 * GI, Instant.now().minusSeconds(600));
        await(() -> provider.capacity("node-a").totalBytes() == 0 ? true : null);
        assertEquals(0, provider.capacity("node-c").availableBytes());
        assertEquals(8 * GI, provider.capacity(null).availableBytes(), "the pool: the nodes that report");
        node("node-a", 2 * GI, Instant.now());
        assertEquals(10 * GI, provider.capacity(null).availableBytes(), "the pool: the sum of the nodes that report");
        assertEquals(8 * GI, provider.largestVolumeBytes(null, false), "the largest volume fits on one node: not the sum");
        assertEquals(2 * GI, provider.largestVolumeBytes("node-a", false));
    }

    @Test
    void deleteWaitsForTheNodeAndSurfacesItsRefusal() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-4", GI), on("node-a")));
        String name = HandoffNames.object(POOL, Ids.volumeIdFor("pvc-4"));
        LoopVolume lv = awaitObject(name);
        lv.getMetadata().setFinalizers(List.of(HandoffNames.FINALIZER)); // as the node does before it makes files
        lv = client.resource(lv).update();
        answerReady(lv, GI);
        String id = call.get(10, TimeUnit.SECONDS).id();

        CompletableFuture<Void> delete = CompletableFuture.runAsync(() -> provider.deleteVolume(id));
        LoopVolume deleting = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(name).get();
            return x.getMetadata().getDeletionTimestamp() != null ? x : null;
        });
        answer(deleting, s -> {
            s.setPhase(Phase.DELETE_FAILED);
            s.setCode("FAILED_PRECONDITION");
            s.setMessage("volume is still staged on node node-a; unstage it before deleting");
        });
        StatusRuntimeException e = (StatusRuntimeException) assertThrows(Exception.class, () -> delete.get(10, TimeUnit.SECONDS)).getCause();
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());

        // a retried delete does not take the old refusal for an answer: it asks the node to try again now
        long refusedAt = client.resources(LoopVolume.class).withName(name).get().getMetadata().getGeneration();
        CompletableFuture<Void> again = CompletableFuture.runAsync(() -> provider.deleteVolume(id));
        LoopVolume held = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(name).get();
            return x.getMetadata().getGeneration() > refusedAt ? x : null;
        });
        assertFalse(again.isDone(), "waits for the node's new attempt");
        held.getMetadata().setFinalizers(List.of()); // the node's new attempt succeeds: it releases its finalizer
        client.resource(held).update();
        again.get(10, TimeUnit.SECONDS);
        assertNull(client.resources(LoopVolume.class).withName(name).get());
        provider.deleteVolume(id); // deleting what is gone succeeds
        assertThrows(EngineException.class, () -> provider.expandVolume(id, 2 * GI, 0));
    }

    @Test
    void deletingAVolumeOfANodeThatIsGoneSucceedsOnceItsNodeObjectIsDeleted() throws Exception {
        client.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName("node-a").endMetadata().build())
                .create();
        node("node-a", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-6", GI), on("node-a")));
        String name = HandoffNames.object(POOL, Ids.volumeIdFor("pvc-6"));
        LoopVolume lv = awaitObject(name);
        lv.getMetadata().setFinalizers(List.of(HandoffNames.FINALIZER));
        lv = client.resource(lv).update();
        answerReady(lv, GI);
        String id = call.get(10, TimeUnit.SECONDS).id();

        // the node stops reporting, its Node object is still there: it may come back with the files, so the delete waits for it
        node("node-a", 10 * GI, Instant.now().minusSeconds(600));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> provider.deleteVolume(id));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertNotNull(client.resources(LoopVolume.class).withName(name).get(), "kept while only silent");

        // the Node object is deleted: nothing is left to free, the retried delete succeeds at once
        client.nodes().withName("node-a").delete();
        await(() -> client.nodes().withName("node-a").get() == null ? true : null);
        long t0 = System.nanoTime();
        provider.deleteVolume(id);
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 1900, "no wait for the node");
        await(() -> client.resources(LoopVolume.class).withName(name).get() == null ? true : null);
    }

    @Test
    void expansionIsANewGenerationTheNodeAnswers() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-5", GI), on("node-a")));
        LoopVolume lv = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-5")));
        answerReady(lv, GI);
        String id = call.get(10, TimeUnit.SECONDS).id();
        CompletableFuture<VolumeMeta> grow = CompletableFuture.supplyAsync(() -> provider.expandVolume(id, 3 * GI, 0));
        LoopVolume asked = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get();
            return x.getSpec().getRequiredBytes() == 3 * GI ? x : null;
        });
        answerReady(asked, 3 * GI);
        assertEquals(3 * GI, grow.get(10, TimeUnit.SECONDS).capacityBytes());
        assertEquals(3 * GI, provider.expandVolume(id, 2 * GI, 0).capacityBytes(), "already that large: no new request");
    }

    // ---- the node's part, played by the test ------------------------------------------------

    void node(String name, long available, Instant heartbeat) {
        node(name, available, heartbeat, Map.of());
    }

    /** @param abnormal the node's abnormal volumes, by ID, with why (LoopPoolNode status.abnormalVolumes) */
    void node(String name, long available, Instant heartbeat, Map<String, String> abnormal) {
        String objName = HandoffNames.poolNode(POOL, name);
        LoopPoolNode n = client.resources(LoopPoolNode.class).withName(objName).get();
        if (n == null) {
            n = new LoopPoolNode(objName, new LoopPoolNodeSpec(POOL, "local.loopcsi.io", name));
            n.getMetadata().setLabels(HandoffNames.labels(POOL, name));
            n = client.resource(n).create();
        }
        LoopPoolNodeStatus s = new LoopPoolNodeStatus();
        s.setTotalBytes(20 * GI);
        s.setAllocatedBytes(20 * GI - available);
        s.setHostFreeBytes(100 * GI);
        s.setAvailableBytes(available);
        s.setHeartbeatTime(heartbeat.toString());
        s.setAbnormalVolumes(abnormal.entrySet().stream().map(e -> new LoopPoolNodeStatus.AbnormalVolume(e.getKey(), e.getValue())).toList());
        n.setStatus(s);
        // replaced, not merge-patched as the node does: the mock server's merge patch keeps an array the
        // real API server's replaces (RFC 7386), and abnormalVolumes must be seen to empty again
        client.resource(n).updateStatus();
        boolean fresh = heartbeat.isAfter(Instant.now().minusSeconds(60));
        await(() -> (fresh ? provider.capacity(name).availableBytes() == available : provider.capacity(name).totalBytes() == 0) ? true : null);
    }

    void answerReady(LoopVolume lv, long bytes) {
        answer(lv, s -> {
            s.setPhase(Phase.READY);
            s.setReady(true);
            s.setCapacityBytes(bytes);
            s.setCode("OK");
            s.setMessage("made");
            s.setCreatedAt(Instant.now().toString());
        });
    }

    void answer(LoopVolume lv, Consumer<LoopVolumeStatus> how) {
        LoopVolume current = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get();
        LoopVolumeStatus s = current.getStatus() == null ? new LoopVolumeStatus() : current.getStatus();
        how.accept(s);
        s.setObservedGeneration(current.getMetadata().getGeneration());
        current.setStatus(s);
        client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).subresource("status")
                .patch(PatchContext.of(PatchType.JSON_MERGE), current);
    }

    /** A node's transfer endpoint as its node role publishes it (issue 35). */
    void transferEndpoint(String name, String address) {
        String objName = HandoffNames.poolNode(POOL, name);
        LoopPoolNode n = client.resources(LoopPoolNode.class).withName(objName).get();
        n.getStatus().setTransferAddress(address);
        n.getStatus().setTransferCertificateSha256(address == null ? null : "ab".repeat(32));
        client.resource(n).updateStatus();
        await(() -> {
            LoopPoolNode seen = client.resources(LoopPoolNode.class).withName(objName).get();
            return java.util.Objects.equals(address, seen.getStatus().getTransferAddress()) ? true : null;
        });
    }

    @Test
    void aCloneAskedForOnAnotherNodeIsMadeThereByAnAuthorisedTransferThatHoldsTheSource() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        node("node-b", 10 * GI, Instant.now());
        CompletableFuture<VolumeMeta> src = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs("pvc-src", GI), on("node-a")));
        LoopVolume srcObject = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-src")));
        answerReady(srcObject, GI);
        String srcId = src.get(10, TimeUnit.SECONDS).id();
        answer(srcObject, s -> s.setLogicalBlockSize(4096)); // node-a's volume has 4 KiB sectors, as its node publishes
        CreateRequest clone = new CreateRequest("pvc-clone", GI, 0, VolumeMode.FILESYSTEM, "xfs", null, srcId, Map.of());

        // node-b serves no transfers: refused, naming why, nothing written
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.createVolume(clone, on("node-b"))));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("node node-a has no transfer endpoint"), e.getStatus().getDescription());
        assertNull(client.resources(LoopVolume.class).withName(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-clone"))).get());
        // where the source's node is allowed too, it is made there, as before transfers
        Placement both = new Placement(List.of("node-a", "node-b"), List.of("node-b", "node-a"));
        CompletableFuture<VolumeMeta> local = CompletableFuture.supplyAsync(() -> provider.createVolume(
                new CreateRequest("pvc-local", GI, 0, VolumeMode.FILESYSTEM, "xfs", null, srcId, Map.of()), both));
        LoopVolume l = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-local")));
        assertEquals("node-a", l.getSpec().getNode());
        assertNull(l.getSpec().getTransferId());
        answerReady(l, GI);
        local.get(10, TimeUnit.SECONDS);

        transferEndpoint("node-a", "10.0.0.1:7443");
        transferEndpoint("node-b", "10.0.0.2:7443");
        // a source of another mode is refused before anything is written
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.createVolume(new CreateRequest("pvc-blk", GI, 0,
                VolumeMode.BLOCK, "", null, srcId, Map.of()), on("node-b"))));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());

        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(clone, on("node-b")));
        String cloneId = Ids.volumeIdFor("pvc-clone");
        LoopVolume lv = awaitObject(HandoffNames.object(POOL, cloneId));
        assertEquals("node-b", lv.getSpec().getNode());
        assertEquals("node-a", lv.getSpec().getSourceNode());
        assertEquals(cloneId, lv.getSpec().getTransferId());
        LoopTransfer t = client.resources(LoopTransfer.class).withName(HandoffNames.object(POOL, cloneId)).get();
        assertNotNull(t, "the authorisation is written with the intent");
        assertEquals(srcId, t.getSpec().getSource());
        assertEquals("node-a", t.getSpec().getSourceNode());
        assertEquals("node-b", t.getSpec().getDestinationNode());
        assertEquals(GI, t.getSpec().getSizeBytes());
        assertEquals(4096, t.getSpec().getLogicalBlockSize(), "the source's sector size, for the destination's loop device");
        Instant notAfter = Instant.parse(t.getSpec().getNotAfter());
        assertTrue(notAfter.isAfter(Instant.now()) && notAfter.isBefore(Instant.now().plus(Duration.ofHours(24))), t.getSpec().getNotAfter());

        // while the transfer reads it, the source cannot be deleted
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> {
            provider.deleteVolume(srcId);
            return null;
        }));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("transfer " + HandoffNames.object(POOL, cloneId)), e.getStatus().getDescription());
        assertNull(client.resources(LoopVolume.class).withName(HandoffNames.object(POOL, srcId)).get().getMetadata().getDeletionTimestamp());

        // a retried call finds the same intent and the same transfer
        CompletableFuture<VolumeMeta> retry = CompletableFuture.supplyAsync(() -> provider.createVolume(clone, on("node-b")));
        answerReady(lv, GI);
        assertEquals(cloneId, call.get(10, TimeUnit.SECONDS).id());
        assertEquals(cloneId, retry.get(10, TimeUnit.SECONDS).id());
        await(() -> client.resources(LoopTransfer.class).withName(HandoffNames.object(POOL, cloneId)).get() == null ? true : null);
        assertEquals(List.of(), client.resources(LoopTransfer.class).list().getItems(), "answered: the transfer is gone");
    }

    LoopVolume awaitObject(String name) {
        return await(() -> client.resources(LoopVolume.class).withName(name).get());
    }

    @Test
    void mutableParametersGoIntoTheSpecAndTheNodesAnswerIsTheCallsAnswer() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        assertTrue(provider.modifiable(), "MODIFY_VOLUME is served through the hand-off");
        CreateRequest thick = new CreateRequest("pvc-m", GI, 0, VolumeMode.FILESYSTEM, "xfs", null, null, Map.of(),
                MutableParameters.parse("mutable_parameters", Map.of("provisioning", "thick")));
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(thick, on("node-a")));
        LoopVolume lv = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-m")));
        assertEquals(Map.of("provisioning", "thick"), lv.getSpec().getMutableParameters());
        answer(lv, s -> {
            s.setPhase(Phase.READY);
            s.setCapacityBytes(GI);
            s.setCode("OK");
            s.setMutableParameters(Map.of("provisioning", "thick"));
        });
        String id = call.get(10, TimeUnit.SECONDS).id();
        assertEquals(Map.of("provisioning", "thick"), provider.volume(id).orElseThrow().mutableParameters(), "what the node applied");

        // a modify adds its keys to the spec and waits for the node
        CompletableFuture<VolumeMeta> modify = CompletableFuture.supplyAsync(() -> provider.modifyVolume(id,
                MutableParameters.parse("mutable_parameters", Map.of("directIO", "off"))));
        LoopVolume asked = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get();
            return x.getSpec().getMutableParameters().containsKey("directIO") ? x : null;
        });
        assertEquals(Map.of("provisioning", "thick", "directIO", "off"), asked.getSpec().getMutableParameters());
        assertFalse(modify.isDone(), "the call waits for the node");
        answer(asked, s -> {
            s.setPhase(Phase.READY);
            s.setCode("OK");
            s.setMutableParameters(Map.of("provisioning", "thick", "directIO", "off"));
        });
        assertEquals(Map.of("provisioning", "thick", "directIO", "off"), modify.get(10, TimeUnit.SECONDS).mutableParameters());
        long generation = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get().getMetadata().getGeneration();
        provider.modifyVolume(id, MutableParameters.parse("mutable_parameters", Map.of("directIO", "off")));
        assertEquals(generation, client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get().getMetadata().getGeneration(),
                "applied already: nothing written, no wait");

        // thick asked again: the node is to check the image (a trim may have punched holes), so it gets a new generation
        CompletableFuture<VolumeMeta> recheck = CompletableFuture.supplyAsync(() -> provider.modifyVolume(id,
                MutableParameters.parse("mutable_parameters", Map.of("provisioning", "thick"))));
        LoopVolume again = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get();
            return x.getMetadata().getGeneration() > generation ? x : null;
        });
        assertEquals(Map.of("provisioning", "thick", "directIO", "off"), again.getSpec().getMutableParameters());
        assertFalse(recheck.isDone(), "the call waits for the node's check");
        answer(again, s -> {
            s.setPhase(Phase.READY);
            s.setCode("OK");
        });
        assertEquals(Map.of("provisioning", "thick", "directIO", "off"), recheck.get(10, TimeUnit.SECONDS).mutableParameters());

        // the node's refusal comes back with its code, and the spec goes back to what is applied
        CompletableFuture<VolumeMeta> refused = CompletableFuture.supplyAsync(() -> provider.modifyVolume(id,
                MutableParameters.parse("mutable_parameters", Map.of("directIO", "on"))));
        LoopVolume on = await(() -> {
            LoopVolume x = client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get();
            return "on".equals(x.getSpec().getMutableParameters().get("directIO")) ? x : null;
        });
        answer(on, s -> {
            s.setPhase(Phase.FAILED);
            s.setCode("FAILED_PRECONDITION");
            s.setMessage("directIO=on: the host filesystem refuses direct I/O");
        });
        StatusRuntimeException e = (StatusRuntimeException) assertThrows(Exception.class, () -> refused.get(10, TimeUnit.SECONDS)).getCause();
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().startsWith("node node-a: directIO=on"), e.getStatus().getDescription());
        assertEquals(Map.of("provisioning", "thick", "directIO", "off"),
                client.resources(LoopVolume.class).withName(lv.getMetadata().getName()).get().getSpec().getMutableParameters());
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.modifyVolume(Ids.volumeIdFor("nope"),
                MutableParameters.parse("mutable_parameters", Map.of("provisioning", "thin")))));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    }

    @Test
    void aGroupSnapshotIsMadeByTheNodeOfItsMembersAndRefusedAcrossNodes() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        node("node-b", 10 * GI, Instant.now());
        assertTrue(provider.groupSnapshots());
        String a1 = made("pvc-a1", "node-a");
        String a2 = made("pvc-a2", "node-a");
        String b1 = made("pvc-b1", "node-b");

        // across nodes: FAILED_PRECONDITION naming each volume and its node, nothing written
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.createGroupSnapshot("g-x",
                List.of(a1, b1))));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains(a1 + " on node node-a") && e.getStatus().getDescription().contains(b1
                + " on node node-b"), e.getStatus().getDescription());
        assertEquals(List.of(), client.resources(LoopGroupSnapshot.class).list().getItems(), "nothing was written");

        CompletableFuture<GroupSnapshotMeta> call = CompletableFuture.supplyAsync(() -> provider.createGroupSnapshot("g-1", List.of(a2, a1)));
        String name = HandoffNames.object(POOL, Ids.groupSnapshotIdFor("g-1"));
        LoopGroupSnapshot g = await(() -> client.resources(LoopGroupSnapshot.class).withName(name).get());
        assertEquals("node-a", g.getSpec().getNode());
        assertEquals("node-a", g.getMetadata().getLabels().get(HandoffNames.NODE_LABEL));
        assertEquals(java.util.stream.Stream.of(a1, a2).sorted().toList(), g.getSpec().getSourceVolumeIds());
        assertFalse(call.isDone(), "the call waits for the node");
        List<String> members = g.getSpec().getSourceVolumeIds().stream().map(v -> Ids.memberSnapshotIdFor("g-1", v)).toList();
        LoopGroupSnapshotStatus s = new LoopGroupSnapshotStatus();
        s.setPhase(Phase.READY);
        s.setCode("OK");
        s.setReadyToUse(true);
        s.setCreationTime(Instant.now().toString());
        s.setObservedGeneration(g.getMetadata().getGeneration());
        // the first member's volume has 4 KiB sectors, as its node publishes
        s.setMembers(List.of(new LoopGroupSnapshotStatus.Member(members.get(0), g.getSpec().getSourceVolumeIds().get(0), GI, 4096),
                new LoopGroupSnapshotStatus.Member(members.get(1), g.getSpec().getSourceVolumeIds().get(1), GI)));
        g.setStatus(s);
        client.resources(LoopGroupSnapshot.class).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), g);
        GroupSnapshotMeta meta = call.get(10, TimeUnit.SECONDS);
        assertEquals(members, meta.snapshotIds());
        assertEquals(meta, provider.createGroupSnapshot("g-1", List.of(a1, a2)), "idempotent by name");
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> provider.createGroupSnapshot("g-1", List.of(a1))));
        assertEquals(Status.Code.ALREADY_EXISTS, e.getStatus().getCode());
        assertEquals(meta, provider.groupSnapshot(meta.id()).orElseThrow());

        // the members are snapshots of the pool, restored on the group's node; deleted only with the group
        assertEquals(meta.id(), provider.snapshot(members.get(0)).orElseThrow().groupSnapshotId());
        assertEquals(members.stream().sorted().toList(), provider.snapshots().stream().map(x -> x.id()).toList());
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> {
            provider.deleteSnapshot(members.get(0));
            return null;
        }));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        CompletableFuture<VolumeMeta> restore = CompletableFuture.supplyAsync(() -> provider.createVolume(new CreateRequest("pvc-r", GI, 0,
                VolumeMode.FILESYSTEM, "xfs", members.get(1), null, Map.of()), Placement.ANYWHERE));
        LoopVolume r = awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor("pvc-r")));
        assertEquals("node-a", r.getSpec().getNode());
        answerReady(r, GI);
        restore.get(10, TimeUnit.SECONDS);
        // on another node, a member is restored by a transfer that carries the member's sector size,
        // so that a 4K-sector member does not come back with 512-byte sectors (issue 35)
        transferEndpoint("node-a", "10.0.0.1:7443");
        transferEndpoint("node-b", "10.0.0.2:7443");
        CompletableFuture<VolumeMeta> remote = CompletableFuture.supplyAsync(() -> provider.createVolume(new CreateRequest("pvc-rb", GI, 0,
                VolumeMode.FILESYSTEM, "xfs", members.get(0), null, Map.of()), on("node-b")));
        String rb = HandoffNames.object(POOL, Ids.volumeIdFor("pvc-rb"));
        LoopVolume rbObject = awaitObject(rb);
        assertEquals("node-b", rbObject.getSpec().getNode());
        LoopTransfer t = await(() -> client.resources(LoopTransfer.class).withName(rb).get());
        assertEquals(members.get(0), t.getSpec().getSource());
        assertEquals(4096, t.getSpec().getLogicalBlockSize(), "the member's sector size, for the destination's loop device");
        // the group is held while the transfer reads its member
        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> {
            provider.deleteGroupSnapshot(meta.id(), members);
            return null;
        }));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("is being read by transfer"), e.getStatus().getDescription());
        answerReady(rbObject, GI);
        remote.get(10, TimeUnit.SECONDS);
        await(() -> client.resources(LoopTransfer.class).withName(rb).get() == null ? true : null);

        e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> {
            provider.deleteGroupSnapshot(meta.id(), List.of(members.get(0)));
            return null;
        }));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        provider.deleteGroupSnapshot(meta.id(), members); // no finalizer here: the object goes at once
        assertNull(client.resources(LoopGroupSnapshot.class).withName(name).get());
        provider.deleteGroupSnapshot(meta.id(), members);
        assertTrue(provider.groupSnapshot(meta.id()).isEmpty());
    }

    /**
     * A transfer a CreateVolume left behind (its LoopVolume removed by an admin, so the call never
     * came back to release it): while its window is live it may be a call between its two writes,
     * so it holds the source; once the window has ended, deleting the source deletes it first.
     */
    @Test
    void aTransferWhoseVolumeIsGoneHoldsItsSourceWhileItsWindowIsLive() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        String srcId = made("pvc-left-src", "node-a");
        String name = leftTransfer("pvc-left", srcId);

        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> grpc(() -> {
            provider.deleteVolume(srcId);
            return null;
        }));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("transfer " + name), e.getStatus().getDescription());
        assertNotNull(client.resources(LoopTransfer.class).withName(name).get(), "kept: its CreateVolume may be writing the intent");

        endWindow(name);
        provider.deleteVolume(srcId); // no finalizer here: the object goes at once
        assertNull(client.resources(LoopTransfer.class).withName(name).get(), "over: deleted with the source's deletion");
        assertNull(client.resources(LoopVolume.class).withName(HandoffNames.object(POOL, srcId)).get());
    }

    /** The controller's sweep deletes the same transfer without anyone deleting the source, once its window has ended. */
    @Test
    void theSweepDeletesATransferWhoseVolumeIsGoneOnceItsWindowHasEnded() throws Exception {
        node("node-a", 10 * GI, Instant.now());
        String srcId = made("pvc-swept-src", "node-a");
        String name = leftTransfer("pvc-swept", srcId);
        provider.sweepTransfers(Duration.ofMillis(50));
        Thread.sleep(300);
        assertNotNull(client.resources(LoopTransfer.class).withName(name).get(), "its window is live: kept");
        endWindow(name);
        await(() -> client.resources(LoopTransfer.class).withName(name).get() == null ? true : null);
        assertNotNull(client.resources(LoopVolume.class).withName(HandoffNames.object(POOL, srcId)).get(), "the source stays");
    }

    /** The LoopTransfer a CreateVolume of claim from source on node-a to node-b writes before its intent, as if the intent was then removed. */
    String leftTransfer(String claim, String source) {
        String dest = Ids.volumeIdFor(claim);
        LoopTransfer t = new LoopTransfer(HandoffNames.object(POOL, dest),
                TransferIntents.spec(POOL, dest, source, "node-a", "node-b", GI, null, Instant.now(), Duration.ofSeconds(2)));
        t.getMetadata().setLabels(HandoffNames.labels(POOL, "node-a"));
        return client.resource(t).create().getMetadata().getName();
    }

    /** The transfer's window moved into the past, as if its minutes had passed. */
    void endWindow(String name) {
        client.resources(LoopTransfer.class).withName(name).edit(o -> {
            o.getSpec().setNotBefore(Instant.now().minus(Duration.ofHours(1)).toString());
            o.getSpec().setNotAfter(Instant.now().minusSeconds(1).toString());
            return o;
        });
    }

    /** A volume the node made. */
    String made(String pvc, String node) throws Exception {
        CompletableFuture<VolumeMeta> call = CompletableFuture.supplyAsync(() -> provider.createVolume(xfs(pvc, GI), on(node)));
        answerReady(awaitObject(HandoffNames.object(POOL, Ids.volumeIdFor(pvc))), GI);
        return call.get(10, TimeUnit.SECONDS).id();
    }

    static CreateRequest xfs(String name, long bytes) {
        return new CreateRequest(name, bytes, 0, VolumeMode.FILESYSTEM, "xfs", null, null, Map.of("loopcsi.io/pool", POOL));
    }

    static Placement on(String node) {
        return new Placement(List.of(node), List.of(node));
    }

    /** Runs body, turning an EngineException into the status the CSI layer would answer. */
    static <T> T grpc(java.util.function.Supplier<T> body) {
        try {
            return body.get();
        } catch (EngineException e) {
            throw Status.Code.valueOf(e.kind().name()).toStatus().withDescription(e.getMessage()).asRuntimeException();
        }
    }

    static <T> T await(java.util.function.Supplier<T> check) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            T v = check.get();
            if (v != null) {
                return v;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("timed out");
    }
}
