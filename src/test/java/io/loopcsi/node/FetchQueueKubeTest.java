package io.loopcsi.node;

import static io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.TransferProgress;
import io.loopcsi.operator.kube.Kubectl;
import io.loopcsi.transfer.TransferObserver;

/**
 * The destination's bound on fetches at once, on kube-testenv's API server (1.20): with a limit
 * of 1, a second restore from another node does not start while the first runs; its LoopVolume
 * says Queued with its place (what `kubectl get loopvolume -o yaml` shows the admin), the
 * handler is told ABORTED (asked again in a second, no failure written), and it runs once the
 * first ends. Pool "fq" of its own: its objects are named fq.*, nothing else of the server is used.
 */
class FetchQueueKubeTest {

    static final String POOL = "fq";
    static KubernetesClient admin;
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED FetchQueueKubeTest: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); `make test-kube`");
        }
        assumeTrue(configured, "no test cluster");
        Kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", "kubernetes/crds/loopvolumes.loopcsi.io-v1.yml");
        admin = new KubernetesClientBuilder().build();
        await("CRD established", Duration.ofSeconds(60), () -> admin.apiextensions().v1().customResourceDefinitions()
                .withName("loopvolumes.loopcsi.io").get().getStatus().getConditions().stream()
                .anyMatch(k -> k.getType().equals("Established") && k.getStatus().equals("True")));
        dir = Files.createTempDirectory(Path.of("/tmp"), "loopcsi-fq-kube-");
    }

    @AfterAll
    static void cleanUp() throws Exception {
        if (admin != null) {
            for (String n : List.of("first", "second")) {
                admin.resources(LoopVolume.class).withName(HandoffNames.object(POOL, Ids.volumeIdFor(n))).delete();
            }
            admin.close();
        }
        if (dir != null) {
            Files.deleteIfExists(dir);
        }
    }

    static LoopVolumeSpec intent(String name) {
        LoopVolumeSpec s = new LoopVolumeSpec();
        s.setPool(POOL);
        s.setDriver(POOL + ".loopcsi.io");
        s.setNode("fq-y");
        s.setName(name);
        s.setMode(VolumeMode.BLOCK);
        s.setRequiredBytes(1L << 20);
        s.setSourceVolumeId(Ids.volumeIdFor("source"));
        s.setSourceNode("fq-x");
        s.setTransferId(Ids.volumeIdFor(name));
        admin.resource(new LoopVolume(HandoffNames.object(POOL, Ids.volumeIdFor(name)), s)).serverSideApply();
        return s;
    }

    @Test
    void aFetchPastTheLimitWaitsQueuedWithItsPlaceAndRunsWhenTheFirstEnds() throws Exception {
        TransferFetch fetch = new TransferFetch(admin, POOL, null, null, null, null, dir, TransferObserver.NONE, 1);
        LoopVolumeSpec first = intent("first");
        LoopVolumeSpec second = intent("second");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        CompletableFuture<String> one = CompletableFuture.supplyAsync(() -> fetch.inSlot(first, () -> {
            running.countDown();
            try {
                end.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "first made";
        }));
        assertTrue(running.await(30, TimeUnit.SECONDS));

        EngineException e = assertThrows(EngineException.class, () -> fetch.inSlot(second, () -> "second made too early"));
        assertEquals(EngineException.Kind.ABORTED, e.kind(), "asked again by the handler, no failure written: " + e.getMessage());
        LoopVolume lv = admin.resources(LoopVolume.class).withName(HandoffNames.object(POOL, second.getTransferId())).get();
        TransferProgress t = lv.getStatus().getTransfer();
        assertEquals(TransferProgress.QUEUED, t.getPhase());
        assertEquals("fq-x", t.getSourceNode());
        assertEquals("waiting for a fetch slot: 1 of at most 1 fetches run on this node, this one is next", t.getReason());

        end.countDown();
        assertEquals("first made", one.get(30, TimeUnit.SECONDS));
        assertEquals("second made", fetch.inSlot(second, () -> "second made"), "the slot is free again");
    }
}
