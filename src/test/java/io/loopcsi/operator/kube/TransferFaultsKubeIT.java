package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import csi.v1.CapacityRange;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.CreateVolumeResponse;
import csi.v1.DeleteSnapshotRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.Topology;
import csi.v1.TopologyRequirement;
import csi.v1.VolumeCapability;
import csi.v1.VolumeContentSource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.TransferProgress;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.testing.CsiClient;

/**
 * Issue 35's faults of a cross-node restore, seen as a user sees them, on the REAL kube-apiserver
 * with the controller and two node processes ({@link TwoNodePool}: pool "tf", nodes node-tf-a and
 * node-tf-b of its own). Every source is a block volume on node-tf-a with random bytes, restored
 * onto node-tf-b; the pool's bandwidth cap (spec.transfer.bandwidthPerNode 8Mi) makes a transfer of
 * a few tens of MiB last seconds, long enough to cut it or delete its source mid-way:
 * <ul>
 * <li>a transfer cut by a restart of the destination, or of the source, goes on from where it
 * stopped (the destination's log names the chunk it went on from, and it received less than the
 * whole), and the volume holds the source's bytes;
 * <li>the source of a running transfer cannot be deleted (FAILED_PRECONDITION naming the
 * transfer), stays intact, and is deleted once the transfer has ended;
 * <li>a transfer whose source's data no longer matches its plan (the snapshot's image changed
 * under it) fails: CreateVolume fails, a TransferFailed Event on the claim, nothing left on
 * node-tf-b (no image, no loop device, no capacity counted) and no LoopTransfer;
 * <li>a clone whose LoopVolume an admin removed mid-way (finalizer stripped, object deleted, the
 * claim gone: no call comes back) leaves its LoopTransfer, and node-tf-a its copy of the source,
 * only until the transfer's window ends: the controller deletes the transfer, node-tf-a the copy.
 * </ul>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TransferFaultsKubeIT {

    static final String POOL = "tf";
    static final String DRIVER = "tf.loopcsi.io";
    static final String A = "node-tf-a";
    static final String B = "node-tf-b";
    static final String CLAIMS = "default";
    static final long MI = 1L << 20;
    /** Slow enough to act mid-way, fast enough for a short test; the least the pool accepts is 1Mi. */
    static final long CAP = 8 * MI;

    static TwoNodePool pool;
    static KubernetesClient admin;
    static Path controllerSocket;

    @BeforeAll
    static void rollOutAPoolWithASlowTransferCap() throws Exception {
        pool = TwoNodePool.create(new TwoNodePool.Spec("TransferFaultsKubeIT", POOL, List.of(A, B), """
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: tf}
                spec:
                  capacityPerNode: 4Gi
                  fsTypes: [xfs]
                  storageClasses:
                    - {name: tf-block, volumeMode: Block}
                  transfer:
                    bandwidthPerNode: 8Mi
                """, StoragePoolReconciler::new, true, TwoNodePool.Timing.QUICK));
        admin = pool.admin();
        pool.rollOut(a -> removeLeftovers());
        controllerSocket = pool.controllerSocket();
        assertEquals(Long.toString(CAP), pool.nodePod(B).env().get("LOOPCSI_NODE_TRANSFER_BANDWIDTH"), "the cap as the operator sets it");
    }

    @AfterAll
    static void stopEverything() throws Exception {
        if (pool != null) {
            try {
                for (String claim : List.of("tf-resumed", "tf-resumed-src", "tf-held", "tf-corrupt", "tf-killed", "tf-left")) {
                    admin.persistentVolumeClaims().inNamespace(CLAIMS).withName(claim).delete();
                }
            } finally {
                pool.close(); // stops the processes, releases the loop devices, mounts and files under its root
            }
        }
    }

    /** What an earlier run on the same cluster left (a developer's cluster may not be fresh). */
    static void removeLeftovers() {
        for (Class<? extends io.fabric8.kubernetes.client.CustomResource<?, ?>> type : List.of(LoopVolume.class, LoopSnapshot.class,
                LoopTransfer.class, LoopPoolNode.class)) {
            for (var o : admin.resources(type).withLabel("loopcsi.io/pool", POOL).list().getItems()) {
                admin.resources(type).withName(o.getMetadata().getName()).edit(x -> {
                    x.getMetadata().setFinalizers(List.of());
                    return x;
                });
                admin.resources(type).withName(o.getMetadata().getName()).delete();
            }
        }
    }

    /**
     * The destination restarted (SIGTERM, as kubelet stops a container) while it fetches: the
     * CreateVolume the controller is waiting on still answers, the fetch went on from a chunk past
     * 0 and received less than the source's data, and the volume's bytes are the source's.
     */
    @Test
    @Order(1)
    void aTransferCutByTheDestinationsRestartGoesOnFromWhereItStopped() throws Exception {
        cutByARestartOf(B, "tf-resumed");
    }

    /** The same, the source restarted: its transfer server goes away, comes back with a new key pair, and the fetch goes on. */
    @Test
    @Order(2)
    void aTransferCutByTheSourcesRestartGoesOnFromWhereItStopped() throws Exception {
        cutByARestartOf(A, "tf-resumed-src");
    }

    private void cutByARestartOf(String restarted, String claim) throws Exception {
        List<String> volumes = new ArrayList<>();
        List<String> snapshots = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket)) {
            try {
                long data = 48 * MI; // 6 s at the cap
                String src = sourceOn(c, claim + "-source", 64 * MI, data, 1);
                volumes.add(src);
                String snap = snapshot(c, claim + "-snap", src);
                snapshots.add(snap);
                String dest = volumeId(claim);
                volumes.add(0, dest);
                CompletableFuture<CreateVolumeResponse> restore = restoreOnB(claim, 64 * MI, snap);
                long done = awaitBytesDone(dest, 12 * MI, restore);
                String logBefore = pool.node(B).log();
                pool.restart(restarted);
                CreateVolumeResponse r = restore.get(90, TimeUnit.SECONDS);
                assertEquals(dest, r.getVolume().getVolumeId());
                assertEquals(B, r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node"));

                // went on from where it stopped: node-tf-b's fetch after the cut started past chunk 0 and received less than all
                String after = pool.node(B).log().substring(restarted.equals(B) ? logBefore.length() : 0);
                Matcher m = Pattern.compile("transfer " + Pattern.quote(dest) + ": \\S+ from node " + A
                        + " fetched in [0-9.]+ s \\((\\d+) bytes of data from chunk (\\d+) on, [0-9]+ MiB/s\\)").matcher(after);
                assertTrue(m.find(), "node-tf-b logs the end of the fetch:\n" + tail(after));
                long received = Long.parseLong(m.group(1));
                long fromChunk = Long.parseLong(m.group(2));
                assertTrue(fromChunk > 0, "the fetch went on from chunk " + fromChunk + ", not from 0 (" + done + " bytes were done before the cut)");
                assertTrue(received < data, "after the cut node-tf-b received " + received + " bytes, less than the source's " + data);
                TransferProgress p = admin.resources(LoopVolume.class).withName(POOL + "." + dest).get().getStatus().getTransfer();
                assertEquals(TransferProgress.DONE, p.getPhase());
                assertEquals(p.getBytesTotal(), p.getBytesDone(), "the plan's data all done");
                assertEquals(data, p.getBytesTotal().longValue(), "the plan is the source's data");

                assertEquals(-1L, Files.mismatch(image(A, src), image(B, dest)), "the restored volume holds the source's bytes");
                assertTransfersGone();
            } finally {
                cleanUp(c, volumes, snapshots);
            }
        }
    }

    /**
     * DeleteSnapshot of the snapshot a transfer reads: FAILED_PRECONDITION naming the transfer,
     * the snapshot intact; once the volume is made, the same DeleteSnapshot succeeds.
     */
    @Test
    @Order(3)
    void aSourceDeletedDuringATransferIsHeldUntilTheTransferEnds() throws Exception {
        List<String> volumes = new ArrayList<>();
        List<String> snapshots = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket)) {
            try {
                String src = sourceOn(c, "tf-held-source", 64 * MI, 32 * MI, 3);
                volumes.add(src);
                String snap = snapshot(c, "tf-held-snap", src);
                snapshots.add(snap);
                Path snapImage = snapshotImage(A, snap);
                byte[] before = digest(snapImage);
                String dest = volumeId("tf-held");
                volumes.add(0, dest);
                CompletableFuture<CreateVolumeResponse> restore = restoreOnB("tf-held", 64 * MI, snap);
                awaitBytesDone(dest, 1, restore);

                StatusRuntimeException held = assertThrows(StatusRuntimeException.class,
                        () -> c.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build()));
                assertEquals(Status.Code.FAILED_PRECONDITION, held.getStatus().getCode(), held.getStatus().toString());
                assertTrue(held.getStatus().getDescription().contains("is being read by transfer " + POOL + "." + dest),
                        held.getStatus().getDescription());
                assertFalse(restore.isDone(), "the refusal came while the transfer ran");
                assertNotNull(admin.resources(LoopSnapshot.class).withName(POOL + "." + snap).get(), "the snapshot is still there");
                assertTrue(java.util.Arrays.equals(before, digest(snapImage)), "and intact");

                restore.get(90, TimeUnit.SECONDS);
                assertEquals(-1L, Files.mismatch(snapImage, image(B, dest)), "the restored volume holds the snapshot's bytes");
                assertTransfersGone();
                c.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build());
                snapshots.remove(snap);
                assertFalse(Files.exists(snapImage), "the delete, once the transfer ended, removed the snapshot");
                await("the LoopSnapshot goes", () -> admin.resources(LoopSnapshot.class).withName(POOL + "." + snap).get() == null);
            } finally {
                cleanUp(c, volumes, snapshots);
            }
        }
    }

    /**
     * The snapshot's image changed under its transfer (what bit rot or a stray writer on
     * node-tf-a would do): the chunk no longer hashes to the plan's hash, the transfer fails and
     * the CreateVolume with it; the claim gets a TransferFailed Event saying so, and node-tf-b
     * keeps nothing of it (no image, no temporary image, no loop device, its capacity as before),
     * nor does the API server (no LoopTransfer).
     */
    @Test
    @Order(4)
    void aTransferWhoseSourceNoLongerMatchesItsPlanFailsAndLeavesNothingOnTheDestination() throws Exception {
        List<String> volumes = new ArrayList<>();
        List<String> snapshots = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket)) {
            try {
                String src = sourceOn(c, "tf-corrupt-source", 64 * MI, 32 * MI, 4);
                volumes.add(src);
                String snap = snapshot(c, "tf-corrupt-snap", src);
                snapshots.add(snap);
                long capacityBefore = capacity(B);
                var pvc = admin.persistentVolumeClaims().inNamespace(CLAIMS).resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                        .withName("tf-corrupt").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce").withVolumeMode("Block")
                        .withNewResources().addToRequests("storage", new Quantity("64Mi")).endResources().endSpec().build()).create();
                String dest = volumeId("tf-corrupt");
                volumes.add(0, dest);
                CompletableFuture<CreateVolumeResponse> restore = restoreOnB("tf-corrupt", 64 * MI, snap);
                awaitBytesDone(dest, 1, restore);
                try (RandomAccessFile f = new RandomAccessFile(snapshotImage(A, snap).toFile(), "rw")) {
                    f.seek(31 * MI); // the last chunk of data: not sent yet at 8 MiB/s
                    f.write("not what the plan hashed".getBytes(StandardCharsets.UTF_8));
                }

                ExecutionException failed = assertThrows(ExecutionException.class, () -> restore.get(90, TimeUnit.SECONDS));
                StatusRuntimeException e = (StatusRuntimeException) failed.getCause();
                assertTrue(e.getStatus().getCode() != Status.Code.OK && e.getStatus().getDescription() != null
                        && e.getStatus().getDescription().matches("(?s).*(hash|digest|DATA_LOSS).*"), "CreateVolume fails naming why: " + e.getStatus());
                var failedEvent = await("a TransferFailed Event on the claim", () -> admin.v1().events().inNamespace(CLAIMS).list().getItems()
                        .stream().filter(ev -> "tf-corrupt".equals(ev.getInvolvedObject().getName()) && "TransferFailed".equals(ev.getReason()))
                        .findFirst().orElse(null));
                assertEquals("Warning", failedEvent.getType());
                assertEquals(pvc.getMetadata().getUid(), failedEvent.getInvolvedObject().getUid(), "kubectl describe pvc shows it");
                assertTrue(failedEvent.getMessage().contains("from node " + A + " to node " + B)
                        && failedEvent.getMessage().matches("(?s).*(hash|digest|DATA_LOSS|data_loss|mismatch).*"), failedEvent.getMessage());

                assertFalse(Files.exists(image(B, dest)), "no image on node-tf-b");
                assertFalse(Files.exists(image(B, dest).resolveSibling(dest + ".img.tmp")), "no temporary image on node-tf-b");
                assertFalse(Files.exists(pool.dataDir(B).resolve("transfers/" + dest + ".json")), "no progress kept on node-tf-b");
                assertEquals("", losetup(pool.dataDir(B)), "no loop device of node-tf-b's pool");
                await("node-tf-b's capacity as before", () -> capacity(B) == capacityBefore);
                assertTransfersGone();
            } finally {
                cleanUp(c, volumes, snapshots);
            }
        }
    }

    /**
     * The destination killed (SIGKILL: no shutdown hook, no checkpoint on the way out) after its
     * first checkpoint is on disk (the progress file records chunks 0..63: the receiver syncs the
     * image and records progress every 64 MiB of data, so the source holds 96 MiB): the node started
     * again goes on from the recorded chunk, not from 0, receives only the data after it, the
     * CreateVolume answers with the source's bytes, and nothing of the fetch is left behind (no
     * temporary image, no progress, no LoopTransfer, no abandoned transfer in the node's audit).
     */
    @Test
    @Order(5)
    void aTransferCutByTheDestinationsKillGoesOnFromItsLastCheckpoint() throws Exception {
        String claim = "tf-killed";
        List<String> volumes = new ArrayList<>();
        List<String> snapshots = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket)) {
            try {
                long data = 96 * MI; // 12 s at the cap: the checkpoint at 64 MiB after 8 s, 4 s before the end
                String src = sourceOn(c, claim + "-source", 128 * MI, data, 5);
                volumes.add(src);
                String snap = snapshot(c, claim + "-snap", src);
                snapshots.add(snap);
                String dest = volumeId(claim);
                volumes.add(0, dest);
                Path progress = pool.dataDir(B).resolve("transfers/" + dest + ".json");
                CompletableFuture<CreateVolumeResponse> restore = restoreOnB(claim, 128 * MI, snap);
                long recorded = StoragePoolOperatorKubeTest.await("node-tf-b's first checkpoint of " + dest + " on disk", Duration.ofSeconds(60),
                        () -> {
                            if (restore.isDone()) {
                                throw new AssertionError("the restore ended before its first checkpoint was seen: " + restore);
                            }
                            long next = firstChunkNotDone(progress);
                            return next >= 64 ? next : null;
                        });
                String logBefore = pool.node(B).log();
                pool.killAndRestart(B);
                assertTrue(Files.exists(progress), "the checkpoint outlived the kill");
                CreateVolumeResponse r = restore.get(90, TimeUnit.SECONDS);
                assertEquals(dest, r.getVolume().getVolumeId());
                assertEquals(B, r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node"));

                String after = pool.node(B).log().substring(logBefore.length());
                Matcher m = Pattern.compile("transfer " + Pattern.quote(dest) + ": \\S+ from node " + A
                        + " fetched in [0-9.]+ s \\((\\d+) bytes of data from chunk (\\d+) on, [0-9]+ MiB/s\\)").matcher(after);
                assertTrue(m.find(), "node-tf-b logs the end of the fetch:\n" + tail(after));
                long received = Long.parseLong(m.group(1));
                long fromChunk = Long.parseLong(m.group(2));
                assertEquals(recorded, fromChunk, "the fetch after the kill went on from the first chunk its progress file did not record");
                assertEquals(data - fromChunk * MI, received, "after the kill node-tf-b received only the data past chunk " + fromChunk
                        + " (of the source's " + data + ")");
                TransferProgress p = admin.resources(LoopVolume.class).withName(POOL + "." + dest).get().getStatus().getTransfer();
                assertEquals(TransferProgress.DONE, p.getPhase());
                assertEquals(data, p.getBytesTotal().longValue(), "the plan is the source's data");

                assertEquals(-1L, Files.mismatch(image(A, src), image(B, dest)), "the restored volume holds the source's bytes");
                assertFalse(Files.exists(image(B, dest).resolveSibling(dest + ".img.tmp")), "no temporary image left on node-tf-b");
                assertFalse(Files.exists(progress), "no progress left on node-tf-b");
                assertFalse(Files.exists(progress.resolveSibling(dest + ".json.tmp")), "no progress being written left on node-tf-b");
                assertTransfersGone();
                await("node-tf-b's audit lists no abandoned transfer", () -> {
                    LoopPoolNode n = admin.resources(LoopPoolNode.class).withName(POOL + "." + B).get();
                    return n != null && n.getStatus() != null && Integer.valueOf(0).equals(n.getStatus().getAbandonedTransferCount()) ? n : null;
                });
            } finally {
                cleanUp(c, volumes, snapshots);
            }
        }
    }

    /**
     * Issue 35's source-side leak: a clone's LoopVolume removed by an admin while node-tf-b
     * fetches (its finalizer stripped, the object deleted, as after deleting the claim): the
     * CreateVolume ends ABORTED and never comes back, so nothing releases its LoopTransfer, and
     * node-tf-a keeps its point-in-time copy of the source for it. While the transfer's window is
     * live the controller keeps it (it could be a CreateVolume between writing it and writing the
     * intent); once the window has ended (moved into the past here, not waited for: it is minutes
     * long) the controller deletes it, logging why, and node-tf-a's sweep removes the copy.
     */
    @Test
    @Order(6)
    void aCloneWhoseVolumeWasRemovedLeavesNothingOnTheSourceOnceItsWindowEnds() throws Exception {
        List<String> volumes = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket)) {
            try {
                String src = sourceOn(c, "tf-left-source", 64 * MI, 48 * MI, 6); // 6 s at the cap: still fetching when removed
                volumes.add(src);
                String dest = volumeId("tf-left");
                String name = POOL + "." + dest;
                Path copy = pool.dataDir(A).resolve("transfers/" + dest + ".source.img");
                CompletableFuture<CreateVolumeResponse> clone = copyOnB("tf-left", 64 * MI,
                        VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(src)).build());
                awaitBytesDone(dest, 1, clone);
                assertTrue(Files.exists(copy), "node-tf-a serves the transfer from a copy of the source");

                admin.resources(LoopVolume.class).withName(name).edit(v -> {
                    v.getMetadata().setFinalizers(List.of());
                    return v;
                });
                admin.resources(LoopVolume.class).withName(name).delete();
                ExecutionException aborted = assertThrows(ExecutionException.class, () -> clone.get(30, TimeUnit.SECONDS));
                assertEquals(Status.Code.ABORTED, ((StatusRuntimeException) aborted.getCause()).getStatus().getCode(), aborted.toString());

                Thread.sleep(5000); // two of the controller's and node-tf-a's sweeps (every 2 s here)
                assertNotNull(admin.resources(LoopTransfer.class).withName(name).get(), "its window is live: the transfer is kept");
                assertTrue(Files.exists(copy), "and node-tf-a's copy with it");

                admin.resources(LoopTransfer.class).withName(name).edit(t -> {
                    t.getSpec().setNotBefore(java.time.Instant.now().minus(Duration.ofHours(1)).toString());
                    t.getSpec().setNotAfter(java.time.Instant.now().minusSeconds(1).toString());
                    return t;
                });
                await("the controller deletes the transfer", () -> admin.resources(LoopTransfer.class).withName(name).get() == null);
                assertTrue(pool.controller().log().contains("transfer " + name + " ended: its destination volume is gone and its window ended"),
                        "the controller logs why:\n" + tail(pool.controller().log()));
                await("node-tf-a removes its copy of the source", () -> !Files.exists(copy));
            } finally {
                cleanUp(c, volumes, List.of());
            }
        }
    }

    /** The first chunk a destination's progress file does not record as written and synced; 0 without the file. */
    static long firstChunkNotDone(Path progress) {
        try {
            var saved = new com.fasterxml.jackson.databind.ObjectMapper().readTree(Files.readAllBytes(progress));
            return java.util.BitSet.valueOf(java.util.Base64.getDecoder().decode(saved.get("done").asText())).nextClearBit(0);
        } catch (java.nio.file.NoSuchFileException e) {
            return 0;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ---- how -------------------------------------------------------------------------------------

    /** A block volume on node-tf-a of size bytes, its first data bytes random (seeded), the rest a hole; its ID. */
    static String sourceOn(CsiClient c, String name, long size, long data, long seed) throws Exception {
        String id = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(size)).addVolumeCapabilities(block())
                .setAccessibilityRequirements(on(A)).build()).getVolume().getVolumeId();
        byte[] buf = new byte[(int) MI];
        Random r = new Random(seed);
        try (RandomAccessFile f = new RandomAccessFile(image(A, id).toFile(), "rw")) {
            for (long at = 0; at < data; at += MI) {
                r.nextBytes(buf);
                f.seek(at);
                f.write(buf);
            }
            f.getFD().sync();
        }
        return id;
    }

    static String snapshot(CsiClient c, String name, String volume) {
        return c.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName(name).setSourceVolumeId(volume).build()).getSnapshot()
                .getSnapshotId();
    }

    /**
     * CreateVolume of claim's volume from snap on node-tf-b, as csi-provisioner asks (strict
     * topology, --extra-create-metadata), in the background: it answers when the transfer ends. As
     * csi-provisioner, it calls again while the answer is "call again" (UNAVAILABLE: the node is
     * not serving, e.g. restarting; the request stays recorded) or the call timed out.
     */
    static CompletableFuture<CreateVolumeResponse> restoreOnB(String claim, long size, String snap) {
        return copyOnB(claim, size, VolumeContentSource.newBuilder().setSnapshot(
                VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap)).build());
    }

    /** The same of any content source (a clone's: a volume). */
    static CompletableFuture<CreateVolumeResponse> copyOnB(String claim, long size, VolumeContentSource content) {
        CreateVolumeRequest req = CreateVolumeRequest.newBuilder().setName(claim)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(size)).addVolumeCapabilities(block())
                .setVolumeContentSource(content)
                .putParameters("csi.storage.k8s.io/pvc/name", claim).putParameters("csi.storage.k8s.io/pvc/namespace", CLAIMS)
                .putParameters("csi.storage.k8s.io/pv/name", "pv-" + claim)
                .setAccessibilityRequirements(on(B)).build();
        return CompletableFuture.supplyAsync(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            try (CsiClient c = new CsiClient(controllerSocket)) {
                while (true) {
                    try {
                        return c.controller.withDeadlineAfter(60, TimeUnit.SECONDS).createVolume(req);
                    } catch (StatusRuntimeException e) {
                        Status.Code code = e.getStatus().getCode();
                        if (code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED || System.nanoTime() > deadline) {
                            throw e;
                        }
                        System.out.println("CreateVolume " + claim + ": " + e.getStatus() + "; calling again in 2 s");
                        try {
                            Thread.sleep(2000);
                        } catch (InterruptedException ie) {
                            Thread.currentThread().interrupt();
                            throw e;
                        }
                    }
                }
            }
        });
    }

    /** The volume ID the controller gives a CreateVolume of this name: its LoopVolume, once written. */
    static String volumeId(String name) {
        return io.loopcsi.engine.Ids.volumeIdFor(name);
    }

    /** Waits until the destination's status.transfer shows at least bytes done; what it shows then. */
    static long awaitBytesDone(String dest, long bytes, CompletableFuture<?> restore) {
        return StoragePoolOperatorKubeTest.await("volume " + dest + "'s transfer past " + bytes + " bytes", Duration.ofSeconds(60), () -> {
            if (restore.isDone()) {
                throw new AssertionError("the restore ended before the transfer was seen under way: " + restore);
            }
            LoopVolume lv = admin.resources(LoopVolume.class).withName(POOL + "." + dest).get();
            TransferProgress p = lv == null || lv.getStatus() == null ? null : lv.getStatus().getTransfer();
            return p != null && TransferProgress.TRANSFERRING.equals(p.getPhase()) && p.getBytesDone() != null && p.getBytesDone() >= bytes
                    ? p.getBytesDone() : null;
        });
    }

    static void assertTransfersGone() {
        await("every transfer ends with its volume's answer",
                () -> admin.resources(LoopTransfer.class).withLabel("loopcsi.io/pool", POOL).list().getItems().isEmpty());
    }

    /** Deletes what a test made, as csi-provisioner and csi-snapshotter do (retrying a refusal for a while). */
    static void cleanUp(CsiClient c, List<String> volumes, List<String> snapshots) throws InterruptedException {
        for (String id : volumes) {
            retried(() -> c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
        }
        for (String id : snapshots) {
            retried(() -> c.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build()));
        }
    }

    static void retried(Runnable call) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if (code != Status.Code.FAILED_PRECONDITION && code != Status.Code.ABORTED && code != Status.Code.UNAVAILABLE
                        || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(1000);
            }
        }
    }

    static Path image(String node, String volume) {
        return pool.dataDir(node).resolve("volumes/" + volume + ".img");
    }

    static Path snapshotImage(String node, String snap) {
        return pool.dataDir(node).resolve("snapshots/" + snap + ".img");
    }

    static byte[] digest(Path file) throws Exception {
        var md = java.security.MessageDigest.getInstance("SHA-256");
        try (var in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 20];
            for (int n; (n = in.read(buf)) > 0;) {
                md.update(buf, 0, n);
            }
        }
        return md.digest();
    }

    /** The loop devices (losetup -a) whose backing file is under dir, one a line; "" for none. */
    static String losetup(Path dir) throws Exception {
        Process p = new ProcessBuilder("losetup", "-a").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return String.join("\n", out.lines().filter(l -> l.contains(dir.toString())).toList());
    }

    static long capacity(String node) {
        try (CsiClient c = new CsiClient(controllerSocket)) {
            return c.controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(block())
                    .setAccessibleTopology(Topology.newBuilder().putSegments("topology.loopcsi.io/node", node)).build()).getAvailableCapacity();
        }
    }

    static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    /** --strict-topology: the selected node is the only requisite and the preferred one. */
    static TopologyRequirement on(String node) {
        Topology t = Topology.newBuilder().putSegments("topology.loopcsi.io/node", node).build();
        return TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t).build();
    }

    static String tail(String log) {
        return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    }

    static <T> T await(String what, Supplier<T> check) {
        return StoragePoolOperatorKubeTest.await(what, check);
    }
}
