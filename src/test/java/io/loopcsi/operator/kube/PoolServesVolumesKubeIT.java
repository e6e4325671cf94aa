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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import csi.v1.ControllerExpandVolumeRequest;
import csi.v1.CreateSnapshotRequest;
import csi.v1.CreateVolumeRequest;
import csi.v1.CreateVolumeResponse;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.NodeExpandVolumeRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.Topology;
import csi.v1.TopologyRequirement;
import csi.v1.VolumeCapability;
import csi.v1.VolumeContentSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.cli.CsiChannels;
import io.loopcsi.csi.Endpoint;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.node.pluginregistration.InfoRequest;
import io.loopcsi.node.pluginregistration.PluginInfo;
import io.loopcsi.node.pluginregistration.RegistrationGrpc;
import io.loopcsi.node.pluginregistration.RegistrationStatus;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.status.Conditions;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.SidecarRequests;

/**
 * A StoragePool serving volumes, on a REAL kube-apiserver 1.20 with kube-controller-manager
 * (kube-testenv): the operator (in this JVM, as its ServiceAccount) rolls out the pool; one
 * controller and two node processes (node-a, node-b) are started by the packaged launcher with
 * the args and env of the pod specs the operator generated, read back from the API server, each
 * authenticated with its own ServiceAccount's token (so with exactly the RBAC the operator
 * grants). The sidecar images cannot be fetched here: the test makes the calls they make
 * (csi-provisioner with --strict-topology, csi-resizer, csi-snapshotter), writes the objects they
 * write (the PV), and plays kubelet towards the node's sockets. Timings are printed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PoolServesVolumesKubeIT {

    static final String NS = "loopcsi-system";
    static final String POOL = "rt";
    static final String DRIVER = "rt.loopcsi.io";
    static final long GI = 1L << 30;
    static final Duration WAIT = Duration.ofSeconds(90);

    static TwoNodePool pool;
    static KubernetesClient admin;
    static Path root;
    static Path controllerSocket;
    static long started;
    static final List<String> timings = new ArrayList<>();

    static String xfsVolume;
    static String xfsPv;
    static String snapshotId;

    @BeforeAll
    static void rollOutThePoolAndStartItsPods() throws Exception {
        started = System.nanoTime();
        pool = TwoNodePool.create(new TwoNodePool.Spec("PoolServesVolumesKubeIT", POOL, List.of("node-a", "node-b"), """
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: rt}
                spec:
                  capacityPerNode: 8Gi
                  fsTypes: [xfs]
                  storageClasses:
                    - {name: rt-xfs, volumeMode: Filesystem, fsType: xfs}
                    - {name: rt-block, volumeMode: Block}
                """, StoragePoolReconciler::new, true, TwoNodePool.Timing.QUICK));
        admin = pool.admin();
        root = pool.root();
        pool.rollOut(a -> removeLeftovers());
        controllerSocket = pool.controllerSocket();
        Deployment dep = admin.apps().deployments().inNamespace(NS).withName("loopcsi-rt-controller").get();
        DaemonSet ds = admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-rt-node").get();
        var provisioner = dep.getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> c.getName().equals("csi-provisioner"))
                .findFirst().orElseThrow();
        assertEquals("registry.k8s.io/sig-storage/csi-provisioner:v2.1.2", provisioner.getImage(), "a provisioner writing v1alpha1 capacity on 1.20");
        assertEquals(List.of("loopcsi"), ds.getSpec().getTemplate().getSpec().getContainers().stream().map(c -> c.getName()).toList());
        for (String n : List.of("node-a", "node-b")) {
            // the transfer server (issue 35) as the operator configures it: the DaemonSet's env, its pod IP and transfer port
            assertEquals("127.0.0.1:" + pool.transferPort(n), pool.nodePod(n).env().get("LOOPCSI_NODE_TRANSFER_ADVERTISE_ADDRESS"), "the pod IP and port");
        }
        timings.add("roll-out and start of the controller and two nodes: " + ms(started) + " ms");
    }

    /** What an earlier run on the same cluster left (a test cluster is usually fresh; a developer's may not be). */
    static void removeLeftovers() {
        admin.persistentVolumeClaims().inNamespace("default").withName("data").delete();
        admin.persistentVolumes().list().getItems().stream()
                .filter(pv -> pv.getSpec().getCsi() != null && DRIVER.equals(pv.getSpec().getCsi().getDriver()))
                .forEach(pv -> admin.persistentVolumes().resource(pv).delete());
        for (Class<? extends io.fabric8.kubernetes.client.CustomResource<?, ?>> type : List.of(LoopVolume.class, LoopSnapshot.class,
                LoopGroupSnapshot.class, LoopPoolNode.class)) {
            for (var o : admin.resources(type).withLabel("loopcsi.io/pool", POOL).list().getItems()) {
                admin.resources(type).withName(o.getMetadata().getName()).edit(x -> {
                    x.getMetadata().setFinalizers(List.of());
                    return x;
                });
                admin.resources(type).withName(o.getMetadata().getName()).delete();
            }
        }
    }

    static Path socketOf(String n) {
        return pool.socketOf(n);
    }

    static Path kubeletDir(String n) {
        return pool.kubeletDir(n);
    }

    static Path dataDir(String n) {
        return pool.dataDir(n);
    }

    @AfterAll
    static void stopEverything() throws Exception {
        if (pool == null) {
            return;
        }
        pool.close();
        timings.add("whole real tier: " + ms(started) + " ms");
        timings.forEach(t -> System.out.println("TIMING " + t));
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target/real-tier-timings.txt"), timings);
    }

    @Test
    @Order(0)
    void eachNodeServesTransfersWithTheCertificateItPublishedAndAdmitsNoStranger() throws Exception {
        java.util.Set<String> published = new java.util.HashSet<>();
        for (String n : List.of("node-a", "node-b")) {
            String pin = admin.resources(LoopPoolNode.class).withName(POOL + "." + n).get().getStatus().getTransferCertificateSha256();
            assertTrue(pin != null && pin.matches("[0-9a-f]{64}"), n + " publishes its transfer certificate: " + pin);
            assertEquals("127.0.0.1:" + pool.transferPort(n), admin.resources(LoopPoolNode.class).withName(POOL + "." + n).get().getStatus()
                    .getTransferAddress(), n + " publishes its pod IP and the DaemonSet's transfer port (downward API, $(POD_IP))");
            published.add(pin);
            java.security.cert.X509Certificate[] seen = new java.security.cert.X509Certificate[1];
            javax.net.ssl.SSLContext tls = javax.net.ssl.SSLContext.getInstance("TLS");
            tls.init(null, new javax.net.ssl.TrustManager[] { new javax.net.ssl.X509TrustManager() {
                public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {
                }

                public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {
                    seen[0] = chain[0];
                }

                public java.security.cert.X509Certificate[] getAcceptedIssuers() {
                    return new java.security.cert.X509Certificate[0];
                }
            } }, null);
            try (var s = (javax.net.ssl.SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", pool.transferPort(n))) {
                s.setSoTimeout(10_000);
                s.startHandshake();
                s.getInputStream().read(); // TLS 1.3: the server's refusal of a client without a certificate comes after the handshake
            } catch (java.io.IOException refused) {
                // expected: this client presents no certificate
            }
            assertEquals(pin, io.loopcsi.transfer.tls.NodeKeys.fingerprintOf(seen[0]), n + " serves with the certificate it published");
            var stranger = io.loopcsi.transfer.tls.NodeKeys.generate("stranger");
            try (var c = new io.loopcsi.transfer.service.TransferClient("127.0.0.1", pool.transferPort(n), pin, stranger, null)) {
                var e = org.junit.jupiter.api.Assertions.assertThrows(io.grpc.StatusRuntimeException.class, () -> c.fetch("t", "vol-x", 0,
                        root, root.resolve("never.img"), 1 << 20, p -> null, null));
                assertEquals(io.grpc.Status.Code.UNAVAILABLE, e.getStatus().getCode(), "a certificate no node published is refused: " + e);
            }
        }
        assertEquals(2, published.size(), "each node has its own key pair");
    }

    @Test
    @Order(1)
    void theNodeAnswersKubeletsPluginRegistration() {
        List<String> args = pool.nodePod("node-b").args();
        Path reg = Path.of(args.get(args.indexOf("--registration-socket") + 1));
        assertTrue(reg.startsWith(kubeletDir("node-b").resolve("plugins_registry")), reg.toString());
        ManagedChannel ch = CsiChannels.open(Endpoint.parse("unix://" + reg));
        try {
            var stub = RegistrationGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
            PluginInfo info = stub.getInfo(InfoRequest.getDefaultInstance());
            assertEquals("CSIPlugin", info.getType());
            assertEquals(DRIVER, info.getName());
            assertEquals(socketOf("node-b").toString(), info.getEndpoint());
            assertEquals(List.of("1.0.0"), info.getSupportedVersionsList());
            stub.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(true).build());
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    @Order(2)
    void aClaimOfTheXfsClassGetsAVolumeOnTheSelectedNodeOnly() throws Exception {
        long before = capacity("node-b");
        assertEquals(8 * GI, before, "an empty pool: capacityPerNode");
        long t0 = System.nanoTime();
        PersistentVolumeClaim pvc = admin.persistentVolumeClaims().inNamespace("default").resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName("data").withNamespace("default")
                .addToAnnotations("volume.kubernetes.io/selected-node", "node-b") // as the scheduler does for WaitForFirstConsumer
                .endMetadata().withNewSpec().withStorageClassName("rt-xfs").withAccessModes("ReadWriteOnce")
                .withNewResources().addToRequests("storage", new Quantity("1Gi")).endResources().endSpec().build()).create();
        // csi-provisioner: CreateVolume named pvc-<uid>, the class' parameters plus --extra-create-metadata, strict topology
        StorageClass sc = admin.storage().v1().storageClasses().withName("rt-xfs").get();
        Map<String, String> params = new HashMap<>(sc.getParameters());
        params.remove("csi.storage.k8s.io/fstype");
        params.put("csi.storage.k8s.io/pvc/name", "data");
        params.put("csi.storage.k8s.io/pvc/namespace", "default");
        params.put("csi.storage.k8s.io/pv/name", "pvc-" + pvc.getMetadata().getUid());
        String pvName = "pvc-" + pvc.getMetadata().getUid();
        CreateVolumeResponse r;
        try (CsiClient c = new CsiClient(controllerSocket)) {
            r = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName(pvName).putAllParameters(params)
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(GI))
                    .addVolumeCapabilities(mount()).setAccessibilityRequirements(on("node-b")).build());
        }
        assertEquals("node-b", r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node"));
        xfsVolume = r.getVolume().getVolumeId();
        xfsPv = pvName;
        admin.persistentVolumes().resource(pv(pvName, r, "rt-xfs", "xfs", "Filesystem", pvc)).create();
        await("PVC Bound", () -> "Bound".equals(admin.persistentVolumeClaims().inNamespace("default").withName("data").get().getStatus().getPhase()));
        timings.add("PVC to Bound (CreateVolume through the node, PV written, bound by kube-controller-manager): " + ms(t0) + " ms");

        LoopVolume lv = admin.resources(LoopVolume.class).withName(POOL + "." + xfsVolume).get();
        assertEquals("node-b", lv.getSpec().getNode());
        assertEquals("data", lv.getSpec().getParameters().get("csi.storage.k8s.io/pvc/name"));
        assertTrue(Files.exists(dataDir("node-b").resolve("volumes/" + xfsVolume + ".img")), "the backing file is on node-b");
        assertFalse(Files.exists(dataDir("node-a").resolve("volumes/" + xfsVolume + ".img")), "and not on node-a");
        await("node-b's capacity shrinks", () -> capacity("node-b") == before - GI);
        assertEquals(8 * GI, capacity("node-a"));
    }

    @Test
    @Order(3)
    void stagedAndPublishedOnItsNodeItKeepsItsDataAcrossARestartAndGrows() throws Exception {
        Path staging = kubeletDir("node-b").resolve("plugins/kubernetes.io/csi/pv/" + xfsPv + "/globalmount");
        Path target = kubeletDir("node-b").resolve("pods/p1/volumes/kubernetes.io~csi/" + xfsPv + "/mount");
        try (CsiClient n = new CsiClient(socketOf("node-b"))) {
            n.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(xfsVolume).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(mount()).build());
            n.node.nodePublishVolume(publish(xfsVolume, staging, target, mount()));
            Files.writeString(target.resolve("hello.txt"), "written on node-b");
            n.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(xfsVolume).setTargetPath(target.toString()).build());
        }
        pool.restart("node-b");
        try (CsiClient n = new CsiClient(socketOf("node-b")); CsiClient c = new CsiClient(controllerSocket)) {
            n.node.nodePublishVolume(publish(xfsVolume, staging, target, mount()));
            assertEquals("written on node-b", Files.readString(target.resolve("hello.txt")));
            // csi-resizer, then kubelet
            var grown = c.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(xfsVolume)
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(2 * GI)).build());
            assertEquals(2 * GI, grown.getCapacityBytes());
            assertTrue(grown.getNodeExpansionRequired());
            n.node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(xfsVolume).setVolumePath(target.toString()).build());
            assertTrue(Files.getFileStore(target).getTotalSpace() > 1800L * (1 << 20), "the filesystem grew");
            // csi-snapshotter
            var snap = c.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("snapshot-1").setSourceVolumeId(xfsVolume).build());
            snapshotId = snap.getSnapshot().getSnapshotId();
            assertTrue(snap.getSnapshot().getReadyToUse());
            assertEquals("node-b", admin.resources(LoopSnapshot.class).withName(POOL + "." + snapshotId).get().getSpec().getNode());
            n.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(xfsVolume).setTargetPath(target.toString()).build());
            n.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(xfsVolume).setStagingTargetPath(staging.toString()).build());
        }
    }

    @Test
    @Order(4)
    void aSnapshotIsRestoredOnItsNode() throws Exception {
        Path staging = kubeletDir("node-b").resolve("plugins/kubernetes.io/csi/pv/restored/globalmount");
        Path target = kubeletDir("node-b").resolve("pods/p2/volumes/kubernetes.io~csi/restored/mount");
        try (CsiClient c = new CsiClient(controllerSocket); CsiClient n = new CsiClient(socketOf("node-b"))) {
            CreateVolumeResponse r = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-restored")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(2 * GI)).addVolumeCapabilities(mount())
                    .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                            .setSnapshotId(snapshotId)))
                    .setAccessibilityRequirements(on("node-b")).build());
            String id = r.getVolume().getVolumeId();
            assertEquals("node-b", r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node"));
            n.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(mount()).build());
            n.node.nodePublishVolume(publish(id, staging, target, mount()));
            assertEquals("written on node-b", Files.readString(target.resolve("hello.txt")));
            n.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
            n.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
            deleteAsTheProvisionerDoes(c, id);
            c.controller.deleteSnapshot(csi.v1.DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshotId).build());
        }
    }

    /**
     * Issue 35: a restore and a clone asked for on node-b of sources on node-a are made on node-b
     * from node-a's content, fetched by node-b's node role from node-a's transfer server (each
     * authenticated by its pod-bound token and its published certificate); the same content, size,
     * mode and filesystem as a same-node restore, a thick destination allocated in full.
     */
    @Test
    @Order(5)
    void aRestoreAndACloneAskedForOnTheOtherNodeAreMadeThereWithTheSourcesContent() throws Exception {
        Path staging = kubeletDir("node-a").resolve("plugins/kubernetes.io/csi/pv/xsrc/globalmount");
        Path target = kubeletDir("node-a").resolve("pods/px/volumes/kubernetes.io~csi/xsrc/mount");
        List<String> made = new ArrayList<>();
        List<String> snaps = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket); CsiClient a = new CsiClient(socketOf("node-a"));
                CsiClient b = new CsiClient(socketOf("node-b"))) {
            try {
                // xfs: a volume on node-a with a file, its snapshot
                String xfs = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-xsrc")
                        .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(GI / 2)).addVolumeCapabilities(mount())
                        .setAccessibilityRequirements(on("node-a")).build()).getVolume().getVolumeId();
                made.add(xfs);
                a.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(xfs).setStagingTargetPath(staging.toString())
                        .setVolumeCapability(mount()).build());
                a.node.nodePublishVolume(publish(xfs, staging, target, mount()));
                Files.writeString(target.resolve("moved.txt"), "written on node-a");
                asKubeletDoes(() -> a.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(xfs)
                        .setTargetPath(target.toString()).build()));
                asKubeletDoes(() -> a.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(xfs)
                        .setStagingTargetPath(staging.toString()).build()));
                String xsnap = c.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("xsnap").setSourceVolumeId(xfs).build())
                        .getSnapshot().getSnapshotId();
                snaps.add(xsnap);

                // seen from outside: the claim's Events, the LoopVolume's status.transfer as it goes, the nodes' metrics
                double sentBefore = metric("node-a", "loopcsi_transfer_sent_bytes_total");
                double receivedBefore = metric("node-b", "loopcsi_transfer_received_bytes_total");
                PersistentVolumeClaim claim = admin.persistentVolumeClaims().inNamespace("default").resource(new PersistentVolumeClaimBuilder()
                        .withNewMetadata().withName("pvc-xrestored").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                        .withNewResources().addToRequests("storage", new io.fabric8.kubernetes.api.model.Quantity("512Mi")).endResources()
                        .endSpec().build()).create();
                Map<String, java.util.Set<String>> phasesSeen = new java.util.concurrent.ConcurrentHashMap<>();
                long t0 = System.nanoTime();
                String restored;
                try (var w = admin.resources(LoopVolume.class).watch(new io.fabric8.kubernetes.client.Watcher<LoopVolume>() {
                    @Override
                    public void eventReceived(Action action, LoopVolume lv) {
                        if (lv.getStatus() != null && lv.getStatus().getTransfer() != null) {
                            phasesSeen.computeIfAbsent(lv.getMetadata().getName(), k -> java.util.concurrent.ConcurrentHashMap.newKeySet())
                                    .add(lv.getStatus().getTransfer().getPhase());
                        }
                    }

                    @Override
                    public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
                    }
                })) {
                    restored = createOn(c, "pvc-xrestored", mount(), VolumeContentSource.newBuilder().setSnapshot(
                            VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(xsnap)).build(), "thin");
                    made.add(0, restored);
                    timings.add("xfs restore of 512Mi from node-a onto node-b: " + ms(t0) + " ms");
                    await("the watch sees the end of the transfer", () -> phasesSeen.getOrDefault(POOL + "." + restored, java.util.Set.of())
                            .contains("Done") ? true : null);
                }
                assertEquals(java.util.Set.of("Transferring", "Done"), phasesSeen.get(POOL + "." + restored),
                        "node-b wrote the fetch's progress while under way, then its end");
                var progress = admin.resources(LoopVolume.class).withName(POOL + "." + restored).get().getStatus().getTransfer();
                assertEquals("node-a", progress.getSourceNode());
                assertTrue(progress.getBytesDone() > 0 && progress.getBytesDone().equals(progress.getBytesTotal()), "all of the plan's data: "
                        + progress.getBytesDone() + " of " + progress.getBytesTotal());
                assertTrue(progress.getStartedAt() != null && progress.getUpdatedAt() != null);
                List<io.fabric8.kubernetes.api.model.Event> onClaim = admin.v1().events().inNamespace("default").list().getItems().stream()
                        .filter(e -> "pvc-xrestored".equals(e.getInvolvedObject().getName()))
                        .filter(e -> e.getSource() != null && "loopcsi-controller".equals(e.getSource().getComponent())).toList();
                // listed by name (random suffixes), so not in the order they were recorded
                Map<String, String> byReason = onClaim.stream().collect(java.util.stream.Collectors.toMap(
                        io.fabric8.kubernetes.api.model.Event::getReason, io.fabric8.kubernetes.api.model.Event::getMessage));
                assertEquals(java.util.Set.of("TransferStarted", "TransferFinished"), byReason.keySet(), "the claim's Events: " + onClaim);
                assertTrue(byReason.get("TransferStarted").contains("from node node-a"), byReason.get("TransferStarted"));
                assertTrue(byReason.get("TransferFinished").contains("of data in"), byReason.get("TransferFinished"));
                onClaim.forEach(e -> assertEquals(claim.getMetadata().getUid(), e.getInvolvedObject().getUid(),
                        "kubectl describe pvc finds it (its field selector has the claim's uid)"));
                admin.resource(claim).delete();
                assertTrue(metric("node-a", "loopcsi_transfer_sent_bytes_total") - sentBefore >= progress.getBytesDone(),
                        "node-a counts the bytes it sent");
                assertTrue(metric("node-b", "loopcsi_transfer_received_bytes_total") - receivedBefore >= progress.getBytesDone(),
                        "node-b counts the bytes it received");
                assertEquals(0.0, metric("node-b", "loopcsi_transfers_active{direction=\"receive\""));
                assertTrue(metric("node-b", "loopcsi_transfer_duration_seconds_count") >= 1);
                String cloned = createOn(c, "pvc-xcloned", mount(), VolumeContentSource.newBuilder().setVolume(
                        VolumeContentSource.VolumeSource.newBuilder().setVolumeId(xfs)).build(), "thick");
                made.add(0, cloned);
                assertAllocated(dataDir("node-b").resolve("volumes/" + cloned + ".img"), GI / 2);
                for (String id : List.of(restored, cloned)) {
                    Path st = kubeletDir("node-b").resolve("plugins/kubernetes.io/csi/pv/" + id + "/globalmount");
                    Path tg = kubeletDir("node-b").resolve("pods/py/volumes/kubernetes.io~csi/" + id + "/mount");
                    b.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(st.toString())
                            .setVolumeCapability(mount()).build());
                    b.node.nodePublishVolume(publish(id, st, tg, mount()));
                    assertEquals("written on node-a", Files.readString(tg.resolve("moved.txt")), id + " on node-b has node-a's file");
                    asKubeletDoes(() -> b.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                            .setTargetPath(tg.toString()).build()));
                    asKubeletDoes(() -> b.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                            .setStagingTargetPath(st.toString()).build()));
                }

                // block: bytes written at two places of the image; restored thick, cloned thin: the same bytes
                String blk = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-bsrc")
                        .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(64L << 20)).addVolumeCapabilities(block())
                        .setAccessibilityRequirements(on("node-a")).build()).getVolume().getVolumeId();
                made.add(blk);
                Path blkImage = dataDir("node-a").resolve("volumes/" + blk + ".img");
                byte[] data = new byte[3 << 20];
                new java.util.Random(35).nextBytes(data);
                try (RandomAccessFile f = new RandomAccessFile(blkImage.toFile(), "rw")) {
                    f.seek(1 << 20);
                    f.write(data);
                    f.seek(40L << 20);
                    f.write(data, 0, 4096);
                }
                String bsnap = c.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("bsnap").setSourceVolumeId(blk).build())
                        .getSnapshot().getSnapshotId();
                snaps.add(bsnap);
                String brestored = createOn(c, "pvc-brestored", block(), VolumeContentSource.newBuilder().setSnapshot(
                        VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(bsnap)).build(), "thick");
                made.add(0, brestored);
                String bcloned = createOn(c, "pvc-bcloned", block(), VolumeContentSource.newBuilder().setVolume(
                        VolumeContentSource.VolumeSource.newBuilder().setVolumeId(blk)).build(), "thin");
                made.add(0, bcloned);
                for (String id : List.of(brestored, bcloned)) {
                    Path img = dataDir("node-b").resolve("volumes/" + id + ".img");
                    assertEquals(-1L, Files.mismatch(blkImage, img), id + ": the same bytes as the source on node-a");
                    assertFalse(Files.exists(dataDir("node-a").resolve("volumes/" + id + ".img")));
                }
                assertAllocated(dataDir("node-b").resolve("volumes/" + brestored + ".img"), 64L << 20);
                assertTrue(du(dataDir("node-b").resolve("volumes/" + bcloned + ".img")) < 16L << 20, "a thin clone stays sparse");
                assertEquals(List.of(), admin.resources(io.loopcsi.handoff.LoopTransfer.class).withLabel("loopcsi.io/pool", POOL).list().getItems(),
                        "every transfer ends with its volume's answer");
                // a clone read a copy of its source made at one instant (the volume may be in use), and
                // node-a deletes those copies once their transfers have ended (TransferSweeper)
                String nodeA = pool.node("node-a").log();
                assertTrue(nodeA.contains("reads a copy of volume " + xfs) && nodeA.contains("reads a copy of volume " + blk),
                        "each cross-node clone read a point-in-time copy of its source");
                Path transfersOfA = dataDir("node-a").resolve("transfers");
                await("node-a deletes the copies of ended transfers", () -> {
                    try (var files = Files.list(transfersOfA)) {
                        return files.noneMatch(f -> f.getFileName().toString().contains(".source.img"));
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
            } finally { // what was made goes, so that the later tests find the nodes as they expect
                for (String id : made) {
                    deleteAsTheProvisionerDoes(c, id);
                }
                for (String id : snaps) {
                    c.controller.deleteSnapshot(csi.v1.DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build());
                }
            }
        }
    }

    /**
     * The sum of a series' samples on n's /q/metrics (the node pod's metrics port); series is the
     * name, or the name with the first labels and no closing brace. 0 when there is none.
     */
    static double metric(String n, String series) throws Exception {
        var http = java.net.http.HttpClient.newHttpClient();
        String body = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + pool.metricsPort(n) + "/q/metrics"))
                .build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith(series + "{") || line.startsWith(series + " ") || (series.contains("{") && line.startsWith(series))) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** CreateVolume on node-b (strict topology) from a source, with provisioning thin or thick; its volume ID. */
    static String createOn(CsiClient c, String name, VolumeCapability cap, VolumeContentSource source, String provisioning) {
        CreateVolumeResponse r = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(cap.hasBlock() ? 64L << 20 : GI / 2))
                .addVolumeCapabilities(cap).setVolumeContentSource(source).putMutableParams("provisioning", provisioning)
                // csi-provisioner's --extra-create-metadata, as the operator's controller Deployment runs it
                .putParameters("csi.storage.k8s.io/pvc/name", name).putParameters("csi.storage.k8s.io/pvc/namespace", "default")
                .putParameters("csi.storage.k8s.io/pv/name", "pv-" + name)
                .setAccessibilityRequirements(on("node-b")).build());
        assertEquals("node-b", r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node"));
        assertEquals(source, r.getVolume().getContentSource());
        String id = r.getVolume().getVolumeId();
        LoopVolume lv = admin.resources(LoopVolume.class).withName(POOL + "." + id).get();
        assertEquals("node-a", lv.getSpec().getSourceNode());
        assertTrue(Files.exists(dataDir("node-b").resolve("volumes/" + id + ".img")));
        return id;
    }

    @Test
    @Order(5)
    void aBlockVolumeOnTheOtherNodeAndItsDeletion() throws Exception {
        VolumeCapability block = VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
        Path staging = kubeletDir("node-a").resolve("plugins/kubernetes.io/csi/volumeDevices/staging/blk");
        Path target = kubeletDir("node-a").resolve("plugins/kubernetes.io/csi/volumeDevices/publish/blk/pod");
        try (CsiClient c = new CsiClient(controllerSocket); CsiClient n = new CsiClient(socketOf("node-a"))) {
            String id = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-block")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(64L << 20)).addVolumeCapabilities(block)
                    .setAccessibilityRequirements(on("node-a")).build()).getVolume().getVolumeId();
            Path image = dataDir("node-a").resolve("volumes/" + id + ".img");
            assertTrue(Files.exists(image));
            n.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(block).build());
            n.node.nodePublishVolume(publish(id, staging, target, block));
            try (RandomAccessFile dev = new RandomAccessFile(target.toFile(), "rw")) {
                dev.write("raw bytes".getBytes(StandardCharsets.UTF_8));
            }
            // deleting a volume still in use is refused with the node's reason...
            StatusRuntimeException busy = assertThrows(StatusRuntimeException.class,
                    () -> c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
            assertEquals(Status.Code.FAILED_PRECONDITION, busy.getStatus().getCode());
            assertTrue(Files.exists(image));
            // the node's hand-off of the refused delete may hold the volume a moment: ABORTED, retried as kubelet retries
            asKubeletDoes(() -> n.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                    .setTargetPath(target.toString()).build()));
            asKubeletDoes(() -> n.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(staging.toString()).build()));
            // ...and once unused, the retried delete removes the backing file
            deleteAsTheProvisionerDoes(c, id);
            assertFalse(Files.exists(image), "the backing file is gone");
            assertEquals(null, admin.resources(LoopVolume.class).withName(POOL + "." + id).get());
        }
    }

    @Test
    @Order(7) // after the capacity check: the pool's status sums the nodes' reports only every 30s
    void mutableParametersAreCarriedOutByTheNode() throws Exception {
        Path images = dataDir("node-a").resolve("volumes");
        try (CsiClient c = new CsiClient(controllerSocket)) {
            assertTrue(c.controller.controllerGetCapabilities(csi.v1.ControllerGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()
                    .stream().anyMatch(x -> x.getRpc().getType() == csi.v1.ControllerServiceCapability.RPC.Type.MODIFY_VOLUME));
            // thick at CreateVolume: every block of the image allocated on the node now
            String thick = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-thick")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(64L << 20)).addVolumeCapabilities(block())
                    .putMutableParams("provisioning", "thick").setAccessibilityRequirements(on("node-a")).build()).getVolume().getVolumeId();
            assertAllocated(images.resolve(thick + ".img"), 64L << 20);
            assertEquals(Map.of("provisioning", "thick"), admin.resources(LoopVolume.class).withName(POOL + "." + thick).get().getStatus()
                    .getMutableParameters(), "what the node applied, in status");
            // thin, then ControllerModifyVolume to thick
            String thin = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-thin")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(64L << 20)).addVolumeCapabilities(block())
                    .setAccessibilityRequirements(on("node-a")).build()).getVolume().getVolumeId();
            Path thinImage = images.resolve(thin + ".img");
            assertTrue(du(thinImage) < (1L << 20), "a sparse image: " + du(thinImage));
            long t0 = System.nanoTime();
            c.controller.controllerModifyVolume(csi.v1.ControllerModifyVolumeRequest.newBuilder().setVolumeId(thin)
                    .putMutableParameters("provisioning", "thick").build());
            timings.add("ControllerModifyVolume thin to thick (64Mi) through the node: " + ms(t0) + " ms");
            assertAllocated(thinImage, 64L << 20);
            LoopVolume lv = admin.resources(LoopVolume.class).withName(POOL + "." + thin).get();
            assertEquals(Map.of("provisioning", "thick"), lv.getStatus().getMutableParameters());
            // an unknown key: INVALID_ARGUMENT naming it, nothing written for the node
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.controller.controllerModifyVolume(
                    csi.v1.ControllerModifyVolumeRequest.newBuilder().setVolumeId(thin).putMutableParameters("iops", "3000")
                            .putMutableParameters("directIO", "off").build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("unknown key \"iops\""), e.getStatus().getDescription());
            LoopVolume after = admin.resources(LoopVolume.class).withName(POOL + "." + thin).get();
            assertEquals(lv.getMetadata().getGeneration(), after.getMetadata().getGeneration(), "nothing changed");
            assertEquals(Map.of("provisioning", "thick"), after.getSpec().getMutableParameters());
            // holes punched into the thick image (what a trim inside does), then thick asked again: the node
            // checks the image, not its metadata, and allocates them again
            Process punch = new ProcessBuilder("fallocate", "--punch-hole", "--offset", "0", "--length", Long.toString(32L << 20),
                    thinImage.toString()).redirectErrorStream(true).start();
            assertEquals(0, punch.waitFor());
            assertTrue(du(thinImage) < (40L << 20), "holes punched: " + du(thinImage));
            c.controller.controllerModifyVolume(csi.v1.ControllerModifyVolumeRequest.newBuilder().setVolumeId(thin)
                    .putMutableParameters("provisioning", "thick").build());
            assertAllocated(thinImage, 64L << 20);
            deleteAsTheProvisionerDoes(c, thick);
            deleteAsTheProvisionerDoes(c, thin);
        }
    }

    @Test
    @Order(8)
    void aGroupSnapshotOfMountedVolumesOnOneNodeRestoresBoth() throws Exception {
        Path kubelet = kubeletDir("node-a");
        List<String> ids = new ArrayList<>();
        try (CsiClient c = new CsiClient(controllerSocket); CsiClient n = new CsiClient(socketOf("node-a"))) {
            assertTrue(c.identity.getPluginCapabilities(csi.v1.GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList().stream()
                    .anyMatch(x -> x.getService().getType() == csi.v1.PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE));
            assertEquals(csi.v1.GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT, c.group
                    .groupControllerGetCapabilities(csi.v1.GroupControllerGetCapabilitiesRequest.getDefaultInstance()).getCapabilities(0)
                    .getRpc().getType());
            // two xfs volumes on node-a, staged, published and written, as two pods of one application would
            for (String v : List.of("app-data", "app-log")) {
                String id = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-" + v)
                        .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(300L << 20)).addVolumeCapabilities(mount())
                        .setAccessibilityRequirements(on("node-a")).build()).getVolume().getVolumeId();
                ids.add(id);
                mountAndWrite(n, kubelet, id, v, "written to " + v);
            }
            long t0 = System.nanoTime();
            csi.v1.CreateVolumeGroupSnapshotRequest create = csi.v1.CreateVolumeGroupSnapshotRequest.newBuilder().setName("groupsnapshot-1")
                    .addAllSourceVolumeIds(ids).build();
            csi.v1.VolumeGroupSnapshot g = c.group.createVolumeGroupSnapshot(create).getGroupSnapshot();
            timings.add("CreateVolumeGroupSnapshot of two mounted 300Mi xfs volumes through the node: " + ms(t0) + " ms");
            assertTrue(g.getReadyToUse());
            assertEquals(2, g.getSnapshotsCount());
            assertEquals(g, c.group.createVolumeGroupSnapshot(create).getGroupSnapshot(), "idempotent by name");
            List<String> members = g.getSnapshotsList().stream().map(csi.v1.Snapshot::getSnapshotId).toList();
            assertEquals(g, c.group.getVolumeGroupSnapshot(csi.v1.GetVolumeGroupSnapshotRequest.newBuilder()
                    .setGroupSnapshotId(g.getGroupSnapshotId()).addAllSnapshotIds(members).build()).getGroupSnapshot());
            assertEquals("node-a", admin.resources(LoopGroupSnapshot.class).withName(POOL + "." + g.getGroupSnapshotId()).get().getSpec().getNode());
            for (String m : members) {
                assertTrue(Files.exists(dataDir("node-a").resolve("snapshots/" + m + ".img")), "member " + m + " on node-a");
            }
            LoopPoolNode reported = await("node-a reports the members", () -> {
                LoopPoolNode x = admin.resources(LoopPoolNode.class).withName(POOL + ".node-a").get();
                return x.getStatus().getSnapshots() == 2 ? x : null;
            });
            assertEquals(List.of(), reported.getStatus().getUnclaimed(), "the group claims its members: " + reported.getStatus().getMessage());
            for (String id : ids) {
                unmount(n, kubelet, id);
            }
            // each member restored into a new volume holds its volume's data of that instant
            for (csi.v1.Snapshot m : g.getSnapshotsList()) {
                String source = m.getSourceVolumeId();
                String what = source.equals(ids.get(0)) ? "app-data" : "app-log";
                String restored = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-restored-" + what)
                        .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(300L << 20)).addVolumeCapabilities(mount())
                        .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                                .setSnapshotId(m.getSnapshotId())))
                        .build()).getVolume().getVolumeId();
                assertTrue(Files.exists(dataDir("node-a").resolve("volumes/" + restored + ".img")), "restored on the group's node");
                Path target = mountAndWrite(n, kubelet, restored, "restored-" + what, null);
                assertEquals("written to " + what, Files.readString(target.resolve("file.txt")));
                unmount(n, kubelet, restored);
                ids.add(restored);
            }
            // a group across two nodes: FAILED_PRECONDITION naming the volumes and their nodes, nothing created
            String onB = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-on-b")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(64L << 20)).addVolumeCapabilities(block())
                    .setAccessibilityRequirements(on("node-b")).build()).getVolume().getVolumeId();
            ids.add(onB);
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.group.createVolumeGroupSnapshot(
                    csi.v1.CreateVolumeGroupSnapshotRequest.newBuilder().setName("groupsnapshot-2").addSourceVolumeIds(ids.get(0))
                            .addSourceVolumeIds(onB).build()));
            assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains(ids.get(0) + " on node node-a")
                    && e.getStatus().getDescription().contains(onB + " on node node-b"), e.getStatus().getDescription());
            assertEquals(1, admin.resources(LoopGroupSnapshot.class).withLabel("loopcsi.io/pool", POOL).list().getItems().size(),
                    "nothing created for the refused group");
            // delete: the members go with the group; a second delete succeeds
            csi.v1.DeleteVolumeGroupSnapshotRequest delete = csi.v1.DeleteVolumeGroupSnapshotRequest.newBuilder()
                    .setGroupSnapshotId(g.getGroupSnapshotId()).addAllSnapshotIds(members).build();
            c.group.deleteVolumeGroupSnapshot(delete);
            for (String m : members) {
                assertFalse(Files.exists(dataDir("node-a").resolve("snapshots/" + m + ".img")), "member " + m + " deleted");
            }
            assertEquals(null, admin.resources(LoopGroupSnapshot.class).withName(POOL + "." + g.getGroupSnapshotId()).get());
            c.group.deleteVolumeGroupSnapshot(delete);
            for (String id : ids) {
                deleteAsTheProvisionerDoes(c, id);
            }
        }
    }

    /** NodeStage + NodePublish (kubelet's paths on the node) and, when given, a file written; returns the target. */
    static Path mountAndWrite(CsiClient n, Path kubelet, String id, String pv, String content) throws Exception {
        Path staging = kubelet.resolve("plugins/kubernetes.io/csi/pv/" + id + "/globalmount");
        Path target = kubelet.resolve("pods/p-" + id + "/volumes/kubernetes.io~csi/" + id + "/mount");
        n.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(mount()).build());
        n.node.nodePublishVolume(publish(id, staging, target, mount()));
        if (content != null) {
            Files.writeString(target.resolve("file.txt"), content);
        }
        return target;
    }

    static void unmount(CsiClient n, Path kubelet, String id) throws InterruptedException {
        asKubeletDoes(() -> n.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(kubelet.resolve("pods/p-" + id + "/volumes/kubernetes.io~csi/" + id + "/mount").toString()).build()));
        asKubeletDoes(() -> n.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(kubelet.resolve("plugins/kubernetes.io/csi/pv/" + id + "/globalmount").toString()).build()));
    }

    /**
     * A node call retried while the volume is busy with another operation (ABORTED, the spec's
     * "operation pending for volume"), as kubelet retries every failed volume operation with back-off.
     */
    static void asKubeletDoes(Runnable call) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.ABORTED || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    @Test
    @Order(6)
    void aRequestNoNodeCanHoldIsRefusedWithResourceExhausted() {
        try (CsiClient c = new CsiClient(controllerSocket)) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.controller.createVolume(CreateVolumeRequest
                    .newBuilder().setName("pvc-too-big").setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(20 * GI))
                    .addVolumeCapabilities(mount()).build()));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("node-a") && e.getStatus().getDescription().contains("node-b"),
                    e.getStatus().getDescription());
        }
        StoragePool p = await("the pool's status sums the nodes' reports", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName(POOL).get();
            return x.getStatus() != null && Integer.valueOf(2).equals(x.getStatus().getReportingNodes())
                    && "2Gi".equals(x.getStatus().getAllocated()) ? x : null;
        });
        assertEquals("16Gi", p.getStatus().getCapacity());
        assertEquals("2Gi", p.getStatus().getAllocated(), "the 2Gi xfs volume");
        assertTrue(Kubectl.ok("get", "storagepool", POOL).contains("2Gi"));
    }

    /**
     * Each csi-provisioner and csi-resizer release the operator deploys, replayed against the
     * controller role (SidecarRequests: their requests as their source builds them) for the
     * StorageClasses the operator wrote: the capacity v2.1.2 asks for with its UNKNOWN mount
     * capability (issue 21: refused, so no CSIStorageCapacity and no pod scheduled), a volume on
     * the selected node, the same volume for a retried call, its growth and deletion.
     */
    @Test
    @Order(8)
    void eachDeployedSidecarReleasesRequestsAreAnsweredByTheControllerRole() throws Exception {
        try (CsiClient c = new CsiClient(controllerSocket)) {
            for (SidecarRequests.Provisioner v : SidecarRequests.Provisioner.values()) {
                for (String name : List.of("rt-xfs", "rt-block")) {
                    StorageClass sc = admin.storage().v1().storageClasses().withName(name).get();
                    var cls = new SidecarRequests.StorageClass(sc.getParameters(), sc.getMountOptions() == null ? List.of() : sc.getMountOptions());
                    var cap = c.controller.getCapacity(SidecarRequests.getCapacity(v, cls, SidecarRequests.segment("node-a")));
                    assertTrue(cap.getAvailableCapacity() > GI && cap.getMaximumVolumeSize().getValue() > GI, v + " " + name + ": " + cap);
                    boolean block = name.equals("rt-block");
                    var claim = new SidecarRequests.Claim(java.util.UUID.randomUUID().toString(), "replay", "default", block ? 8L << 20 : 300L << 20,
                            List.of("ReadWriteOnce"), block);
                    CreateVolumeRequest req = SidecarRequests.createVolume(v, cls, claim, "xfs", "node-a", true, null, Map.of("provisioning", "thin"));
                    CreateVolumeResponse r = c.controller.createVolume(req);
                    assertEquals("node-a", r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node"), v + " " + name);
                    assertEquals(r.getVolume().getVolumeId(), c.controller.createVolume(req).getVolume().getVolumeId(), v + ": a retried CreateVolume");
                    var grown = c.controller.controllerExpandVolume(SidecarRequests.expandVolume(r.getVolume().getVolumeId(), 2 * claim.bytes(), block,
                            block ? null : "xfs", List.of(), "ReadWriteOnce", true));
                    assertTrue(grown.getCapacityBytes() >= 2 * claim.bytes() && grown.getNodeExpansionRequired(), v + ": " + grown);
                    deleteAsTheProvisionerDoes(c, r.getVolume().getVolumeId());
                    assertFalse(Files.exists(dataDir("node-a").resolve("volumes/" + r.getVolume().getVolumeId() + ".img")));
                }
            }
        }
    }

    /**
     * Issue 24, part 4, as an admin uses it: a hostReserve no node can serve from turns the pool
     * Degraded (HostReserveTooLarge, a Warning Event) and leaves the node nothing to offer; a
     * sensible one with thinOvercommit 2 lets a thin volume past what the cap has left, never a
     * thick one. The node plugin is restarted from the DaemonSet's new template, as its rollout would.
     */
    @Test
    @Order(9)
    void theHostReserveAndTheThinOvercommitChangeWhatTheNodeOffers() throws Exception {
        editCapacity("100Ti", 2.0);
        restartFromTemplate("node-a", "100Ti");
        var report = await("node-a reports the reserve it cannot serve from", () -> {
            var st = admin.resources(LoopPoolNode.class).withName(POOL + ".node-a").get().getStatus();
            return st != null && st.getCapacityProblem() != null && !st.getCapacityProblem().isBlank() ? st : null;
        });
        assertTrue(report.getCapacityProblem().startsWith("the host reserve 102400Gi is not less than the size of the host filesystem"),
                report.getCapacityProblem());
        assertEquals(2.0, report.getThinOvercommit());
        var degraded = await("the pool is Degraded for it", () -> Conditions.find(admin.resources(StoragePool.class).withName(POOL).get()
                .getStatus().getConditions(), Conditions.DEGRADED).filter(c -> "HostReserveTooLarge".equals(c.getReason())).orElse(null));
        assertTrue(degraded.getMessage().contains("node-a: the host reserve 102400Gi"), degraded.getMessage());
        await("a Warning Event says so", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && "HostReserveTooLarge".equals(e.getReason())
                        && "Warning".equals(e.getType())));
        assertEquals(0, capacity("node-a"));
        try (CsiClient c = new CsiClient(controllerSocket)) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.controller.createVolume(CreateVolumeRequest
                    .newBuilder().setName("pvc-reserved").setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(GI))
                    .addVolumeCapabilities(mount()).setAccessibilityRequirements(on("node-a")).build()));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("the host reserve 102400Gi"), e.getStatus().getDescription());
        }

        editCapacity("1Gi", 2.0);
        restartFromTemplate("node-a", "1Gi");
        var fixed = await("node-a serves again, overcommitted", () -> {
            var st = admin.resources(LoopPoolNode.class).withName(POOL + ".node-a").get().getStatus();
            return st != null && "".equals(st.getCapacityProblem()) && Long.valueOf(GI).equals(st.getHostReserveBytes()) ? st : null;
        });
        assertTrue(fixed.getAvailableBytes() > fixed.getAvailableThickBytes(), "thin volumes may pass what the cap has left: " + fixed.getAvailable());
        assertEquals(fixed.getAvailableBytes(), capacity("node-a"), "GetCapacity (the CSIStorageCapacity objects) gives the thin figure");
        await("the pool is no longer Degraded for it", () -> Conditions.find(admin.resources(StoragePool.class).withName(POOL).get()
                .getStatus().getConditions(), Conditions.DEGRADED).filter(c -> !"HostReserveTooLarge".equals(c.getReason())).orElse(null));
        long pastTheCap = fixed.getAvailableThickBytes() / GI * GI + GI;
        try (CsiClient c = new CsiClient(controllerSocket)) {
            StatusRuntimeException thick = assertThrows(StatusRuntimeException.class, () -> c.controller.createVolume(CreateVolumeRequest
                    .newBuilder().setName("pvc-thick-past-cap").setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(pastTheCap))
                    .addVolumeCapabilities(block()).setAccessibilityRequirements(on("node-a")).putMutableParams("provisioning", "thick").build()));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, thick.getStatus().getCode());
            assertTrue(thick.getStatus().getDescription().contains("for thick volumes"), thick.getStatus().getDescription());
            var thin = c.controller.createVolume(CreateVolumeRequest.newBuilder().setName("pvc-thin-past-cap")
                    .setCapacityRange(csi.v1.CapacityRange.newBuilder().setRequiredBytes(pastTheCap)).addVolumeCapabilities(block())
                    .setAccessibilityRequirements(on("node-a")).build());
            assertEquals(pastTheCap, thin.getVolume().getCapacityBytes());
            deleteAsTheProvisionerDoes(c, thin.getVolume().getVolumeId());
        }
    }

    static void editCapacity(String hostReserve, Double thinOvercommit) {
        admin.resources(StoragePool.class).withName(POOL).edit(p -> {
            p.getSpec().setHostReserve(hostReserve);
            p.getSpec().setThinOvercommit(thinOvercommit);
            return p;
        });
    }

    /** The node plugin stopped and started again from the DaemonSet's template once it carries the reserve. */
    static void restartFromTemplate(String n, String hostReserve) throws Exception {
        DaemonSet ds = await("the node DaemonSet passes --host-reserve " + hostReserve, () -> {
            DaemonSet d = admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-rt-node").get();
            List<String> args = d.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs();
            int i = args.indexOf("--host-reserve");
            return i >= 0 && args.get(i + 1).equals(hostReserve) && args.contains("--thin-overcommit") ? d : null;
        });
        pool.restartFrom(ds, n);
    }

    @Test
    @Order(10)
    void thePoolsDeletionIsHeldWhileItsVolumesExist() throws Exception {
        Kubectl.ok("delete", "storagepool", POOL, "--wait=false");
        await("deletion held", () -> Conditions.find(admin.resources(StoragePool.class).withName(POOL).get().getStatus().getConditions(),
                Conditions.READY).map(c -> "DeletionBlocked".equals(c.getReason()) && c.getMessage().contains(xfsPv)).orElse(false));
        // the claim goes: its PV is released and deleted through the driver, as csi-provisioner does for reclaimPolicy Delete
        admin.persistentVolumeClaims().inNamespace("default").withName("data").delete();
        try (CsiClient c = new CsiClient(controllerSocket)) {
            deleteAsTheProvisionerDoes(c, xfsVolume);
        }
        admin.persistentVolumes().withName(xfsPv).delete();
        assertFalse(Files.exists(dataDir("node-b").resolve("volumes/" + xfsVolume + ".img")));
        await("the pool is gone once its volumes are", () -> admin.resources(StoragePool.class).withName(POOL).get() == null);
    }

    // ---- what the sidecars and kubelet send ----------------------------------------------------

    /**
     * DeleteVolume, retried while the node refuses it as still in use, as csi-provisioner retries
     * (right after an unstage the kernel may hold the loop device a moment longer: it is detached
     * when its last user lets go), or as busy with another operation on it (ABORTED: seen once right
     * after a ModifyVolume on a loaded machine; csi-provisioner retries every error).
     */
    static void deleteAsTheProvisionerDoes(CsiClient c, String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                return;
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if (code != Status.Code.FAILED_PRECONDITION && code != Status.Code.ABORTED || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(1000);
            }
        }
    }

    /** Bytes the file's blocks take on the host (du). */
    static long du(Path file) throws Exception {
        Process p = new ProcessBuilder("du", "--block-size=1", file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.waitFor(), out);
        return Long.parseLong(out.split("\\s+")[0]);
    }

    /** Thick: every block of the image allocated (du = size; a file system may add a block of its own bookkeeping). */
    static void assertAllocated(Path image, long size) throws Exception {
        long du = du(image);
        assertTrue(du >= size && du <= size + (1L << 20), image + ": du " + du + " for a size of " + size);
    }

    static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static long capacity(String node) {
        try (CsiClient c = new CsiClient(controllerSocket)) {
            return c.controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(mount())
                    .setAccessibleTopology(Topology.newBuilder().putSegments("topology.loopcsi.io/node", node)).build()).getAvailableCapacity();
        }
    }

    static VolumeCapability mount() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("xfs"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    /** --strict-topology: the selected node is the only requisite and the preferred one. */
    static TopologyRequirement on(String node) {
        Topology t = Topology.newBuilder().putSegments("topology.loopcsi.io/node", node).build();
        return TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t).build();
    }

    static NodePublishVolumeRequest publish(String id, Path staging, Path target, VolumeCapability cap) {
        return NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(cap).build();
    }

    /** The PV csi-provisioner writes: node affinity from the volume's accessible topology. */
    static PersistentVolume pv(String name, CreateVolumeResponse r, String sc, String fsType, String mode, PersistentVolumeClaim claim) {
        String node = r.getVolume().getAccessibleTopology(0).getSegmentsMap().get("topology.loopcsi.io/node");
        return new PersistentVolumeBuilder().withNewMetadata().withName(name)
                .addToAnnotations("pv.kubernetes.io/provisioned-by", DRIVER).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity(Long.toString(r.getVolume().getCapacityBytes()))))
                .withAccessModes("ReadWriteOnce").withPersistentVolumeReclaimPolicy("Delete").withStorageClassName(sc).withVolumeMode(mode)
                .withNewClaimRef().withNamespace(claim.getMetadata().getNamespace()).withName(claim.getMetadata().getName())
                .withUid(claim.getMetadata().getUid()).endClaimRef()
                .withNewCsi().withDriver(DRIVER).withVolumeHandle(r.getVolume().getVolumeId()).withFsType(fsType).endCsi()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey("topology.loopcsi.io/node")
                .withOperator("In").withValues(node).endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build();
    }

    static long ms(long t0) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    static <T> T await(String what, Supplier<T> check) {
        return StoragePoolOperatorKubeTest.await(what, check);
    }

    static void assertPresent(Object o) {
        assertNotNull(o);
    }
}
