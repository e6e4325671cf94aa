package io.loopcsi.transfer.kube;

import static io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.handoff.LoopTransfer;
import io.loopcsi.handoff.LoopTransferSpec;
import io.loopcsi.operator.kube.Kubectl;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.service.BearerToken;
import io.loopcsi.transfer.service.SourceImages;
import io.loopcsi.transfer.service.TransferClient;
import io.loopcsi.transfer.service.TransferServer;
import io.loopcsi.transfer.service.TransferService;
import io.loopcsi.transfer.tls.NodeKeys;

/**
 * Two node-role transfer endpoints (nodes x and y of pool "xfer", each its own data dir and key
 * pair) on kube-testenv's real API server (1.20): the authorisation is a LoopTransfer, the caller's
 * identity its pod-bound service-account token (TokenReview + the Pod) and the certificate its node
 * published in its LoopPoolNode. The pods are objects only (no kubelet): what the API server says
 * about them is what is checked. Pinned here: on 1.20 a TokenReview of a pod-bound token names the
 * pod in user.extra (authentication.kubernetes.io/pod-name and /pod-uid).
 */
class TransferAuthorisationKubeTest {

    static final String POOL = "xfer";
    static final String NS = "loopcsi-xfer-test";
    static final String SA = "xfer-node";
    static final String DS = "xfer-node";
    static final long SIZE = 16L << 20;
    static final String SRC = Ids.volumeIdFor("xfer-source");
    static final CommandRunner RUN = new CommandRunner(Duration.ofSeconds(60));
    static final AllocatedRanges RANGES = new AllocatedRanges(RUN);

    static KubernetesClient admin;
    static Path dir;
    static PoolDirectory x;
    static PoolDirectory y;
    static NodeKeys xKeys;
    static NodeKeys yKeys;
    static TransferServer xServer;
    static TransferServer yServer;
    static Pod xPod;
    static Pod yPod;
    static final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED TransferAuthorisationKubeTest: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); `make test-kube`");
        }
        assumeTrue(configured, "no test cluster");
        for (String crd : List.of("looppoolnodes", "looptransfers")) {
            Kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", "kubernetes/crds/" + crd + ".loopcsi.io-v1.yml");
        }
        admin = new KubernetesClientBuilder().build();
        await("CRDs established", Duration.ofSeconds(60), () -> List.of("looppoolnodes", "looptransfers").stream().allMatch(c -> admin.apiextensions().v1()
                .customResourceDefinitions().withName(c + ".loopcsi.io").get().getStatus().getConditions().stream()
                .anyMatch(k -> k.getType().equals("Established") && k.getStatus().equals("True"))));
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
        admin.serviceAccounts().inNamespace(NS).resource(new ServiceAccountBuilder().withNewMetadata().withName(SA).endMetadata().build())
                .serverSideApply();
        // nodes x and y exist, so that the pod garbage collector leaves pods bound to them alone
        for (String n : List.of("x", "y")) {
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("xfer-" + n).addToLabels("loopcsi-xfer-test", "1").endMetadata()
                    .build()).serverSideApply();
        }
        // the pool's DaemonSet: selects both nodes and takes the pods below as its own (OnDelete: never replaces them)
        DaemonSet ds = admin.apps().daemonSets().inNamespace(NS).resource(new DaemonSetBuilder().withNewMetadata().withName(DS).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", DS).endSelector().withNewUpdateStrategy().withType("OnDelete")
                .endUpdateStrategy().withNewTemplate().withNewMetadata().addToLabels("app", DS).endMetadata().withNewSpec()
                .withServiceAccountName(SA).addToNodeSelector("loopcsi-xfer-test", "1").addNewToleration().withOperator("Exists").endToleration()
                .addNewContainer().withName("node").withImage("loopcsi:none").endContainer().endSpec().endTemplate().endSpec().build())
                .serverSideApply();
        xPod = nodePod(ds, "x");
        yPod = nodePod(ds, "y");

        dir = Files.createTempDirectory(Path.of("/tmp"), "loopcsi-xfer-kube-");
        x = new PoolDirectory(Files.createDirectory(dir.resolve("x")));
        y = new PoolDirectory(Files.createDirectory(dir.resolve("y")));
        Path src = x.volumeImage(SRC);
        try (RandomAccessFile f = new RandomAccessFile(src.toFile(), "rw")) {
            f.setLength(SIZE);
            byte[] b = new byte[3 << 20];
            new Random(7).nextBytes(b);
            f.seek(5L << 20);
            f.write(b);
        }
        xKeys = NodeKeys.generate("xfer-x");
        yKeys = NodeKeys.generate("xfer-y");
        publish("x", xKeys);
        publish("y", yKeys);
        xServer = serve("x", x);
        yServer = serve("y", y);
    }

    @AfterAll
    static void cleanUp() {
        for (AutoCloseable c : open) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the next one still closes
            }
        }
        if (x != null) {
            x.lock().close();
            y.lock().close();
        }
        if (dir != null) {
            KernelCleanup.deleteTree(dir);
        }
        if (admin == null) {
            return;
        }
        admin.resources(LoopTransfer.class).withLabel(HandoffNames.POOL_LABEL, POOL).delete();
        admin.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, POOL).delete();
        admin.namespaces().withName(NS).delete();
        for (String n : List.of("x", "y")) {
            admin.nodes().withName("xfer-" + n).delete();
        }
        admin.close();
    }

    // ---- the finding on 1.20 -----------------------------------------------------------------

    @Test
    void aPodBoundTokensReviewNamesThePodOn120() {
        TokenReview r = admin.authentication().v1().tokenReviews().create(new TokenReviewBuilder().withNewSpec().withToken(token(yPod))
                .withAudiences(TokenReviewIdentity.AUDIENCE).endSpec().build());
        System.out.println("TokenReview of a pod-bound token on " + admin.getKubernetesVersion().getGitVersion() + ": user "
                + r.getStatus().getUser().getUsername() + ", extra " + r.getStatus().getUser().getExtra());
        assertTrue(r.getStatus().getAuthenticated(), String.valueOf(r.getStatus().getError()));
        assertEquals("system:serviceaccount:" + NS + ":" + SA, r.getStatus().getUser().getUsername());
        Map<String, List<String>> extra = r.getStatus().getUser().getExtra();
        assertEquals(List.of(yPod.getMetadata().getName()), extra.get(TokenReviewIdentity.POD_NAME));
        assertEquals(List.of(yPod.getMetadata().getUid()), extra.get(TokenReviewIdentity.POD_UID));
    }

    // ---- transfers ---------------------------------------------------------------------------

    @Test
    void anAuthorisedTransferArrivesWhole() throws Exception {
        authorise("t-ok", "x", "y", Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600));
        Path dst = y.volumeImage(Ids.volumeIdFor("t-ok"));
        TransferClient.Result r = client(xServer, xKeys, yKeys, yPod).fetch("t-ok", SRC, 0, y.root(), dst, SIZE, RANGES::of, null);
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), dst), "the content arrived");
        assertTrue(r.bytesReceived() <= (3L << 20) * AllocatedRanges.BUDGET, "only the data travelled: " + r.bytesReceived());
    }

    @Test
    void aTransferNoLoopTransferNamesIsRefused() {
        denied("t-none", client(xServer, xKeys, yKeys, yPod), "no LoopTransfer");
    }

    @Test
    void aTransferAuthorisedToAnotherNodeIsRefused() {
        authorise("t-other", "x", "z", Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600));
        denied("t-other", client(xServer, xKeys, yKeys, yPod), "authorised to node z");
        // node x calling node y for a transfer from x: y is not its source
        authorise("t-back", "x", "y", Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600));
        denied("t-back", client(yServer, yKeys, xKeys, xPod), "asked of the wrong source node");
    }

    @Test
    void aTransferOutsideItsWindowIsRefused() {
        authorise("t-late", "x", "y", Instant.now().minusSeconds(3600), Instant.now().minusSeconds(60));
        denied("t-late", client(xServer, xKeys, yKeys, yPod), "after its window");
        authorise("t-early", "x", "y", Instant.now().plusSeconds(600), Instant.now().plusSeconds(3600));
        denied("t-early", client(xServer, xKeys, yKeys, yPod), "before its window");
    }

    @Test
    void aCallerWhoseTokenOrCertificateIsNotItsNodesIsRefused() {
        authorise("t-who", "x", "y", Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600));
        // y's certificate, x's pod token: the certificate is not the one the token's node published
        denied("t-who", client(xServer, xKeys, yKeys, xPod), "certificate of another node");
        // no token at all
        TransferClient none = new TransferClient("127.0.0.1", xServer.port(), xKeys.fingerprint(), yKeys, null);
        open.add(none);
        denied("t-who", none, "no token");
        // a token for another audience
        String wrongAudience = admin.serviceAccounts().inNamespace(NS).withName(SA).tokenRequest(new TokenRequestBuilder().withNewSpec()
                .withAudiences("https://kubernetes.default.svc.cluster.local").withExpirationSeconds(600L).withNewBoundObjectRef()
                .withApiVersion("v1").withKind("Pod").withName(yPod.getMetadata().getName()).withUid(yPod.getMetadata().getUid())
                .endBoundObjectRef().endSpec().build()).getStatus().getToken();
        TransferClient other = new TransferClient("127.0.0.1", xServer.port(), xKeys.fingerprint(), yKeys, new BearerToken(() -> wrongAudience));
        open.add(other);
        denied("t-who", other, "a token of another audience");
        assertFalse(Files.exists(y.volumeImage(Ids.volumeIdFor("t-who"))), "nothing made for a refused caller");
    }

    // ---- helpers -----------------------------------------------------------------------------

    static void denied(String transferId, TransferClient c, String why) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.fetch(transferId, SRC, 0, y.root(),
                y.volumeImage(Ids.volumeIdFor(transferId)), SIZE, RANGES::of, null), why);
        assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode(), why + ": " + e.getStatus());
        System.out.println("refused (" + why + "): " + e.getStatus().getDescription());
    }

    static TransferClient client(TransferServer server, NodeKeys serverKeys, NodeKeys keys, Pod pod) {
        String token = token(pod);
        TransferClient c = new TransferClient("127.0.0.1", server.port(), serverKeys.fingerprint(), keys, new BearerToken(() -> token));
        open.add(c);
        return c;
    }

    static TransferServer serve(String node, PoolDirectory pool) throws IOException {
        NodeKeys keys = node.equals("x") ? xKeys : yKeys;
        TransferServer s = TransferServer.start("127.0.0.1", 0, keys, new PublishedPins(admin, POOL), new TransferService("xfer-" + node,
                new SourceImages(pool), new LoopTransferGrants(admin, POOL), new TokenReviewIdentity(admin, POOL, NS, SA, DS), RANGES,
                Clock.systemUTC()));
        open.add(s);
        return s;
    }

    static Pod nodePod(DaemonSet ds, String node) {
        return admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(DS + "-" + node).addToLabels("app", DS)
                .addNewOwnerReference().withApiVersion("apps/v1").withKind("DaemonSet").withName(DS).withUid(ds.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(true).endOwnerReference().endMetadata().withNewSpec().withServiceAccountName(SA)
                .withNodeName("xfer-" + node).addNewToleration().withOperator("Exists").endToleration().addNewContainer().withName("node")
                .withImage("loopcsi:none").endContainer().endSpec().build()).create();
    }

    static String token(Pod pod) {
        return admin.serviceAccounts().inNamespace(NS).withName(SA).tokenRequest(new TokenRequestBuilder().withNewSpec()
                .withAudiences(TokenReviewIdentity.AUDIENCE).withExpirationSeconds(600L).withNewBoundObjectRef().withApiVersion("v1")
                .withKind("Pod").withName(pod.getMetadata().getName()).withUid(pod.getMetadata().getUid()).endBoundObjectRef().endSpec()
                .build()).getStatus().getToken();
    }

    static void publish(String node, NodeKeys keys) {
        LoopPoolNode n = new LoopPoolNode(HandoffNames.poolNode(POOL, "xfer-" + node), new LoopPoolNodeSpec(POOL, "xfer.loopcsi.io",
                "xfer-" + node));
        n.getMetadata().setLabels(HandoffNames.labels(POOL, "xfer-" + node));
        LoopPoolNode made = admin.resources(LoopPoolNode.class).resource(n).create();
        LoopPoolNodeStatus s = new LoopPoolNodeStatus();
        s.setTransferCertificateSha256(keys.fingerprint());
        made.setStatus(s);
        admin.resources(LoopPoolNode.class).resource(made).updateStatus();
    }

    static void authorise(String id, String from, String to, Instant notBefore, Instant notAfter) {
        LoopTransferSpec s = new LoopTransferSpec();
        s.setPool(POOL);
        s.setTransferId(id);
        s.setSource(SRC);
        s.setSourceNode("xfer-" + from);
        s.setDestinationNode("xfer-" + to);
        s.setSizeBytes(SIZE);
        s.setNotBefore(notBefore.toString());
        s.setNotAfter(notAfter.toString());
        LoopTransfer t = new LoopTransfer(HandoffNames.object(POOL, id), s);
        t.getMetadata().setLabels(Map.of(HandoffNames.POOL_LABEL, POOL));
        admin.resources(LoopTransfer.class).resource(t).serverSideApply();
    }
}
