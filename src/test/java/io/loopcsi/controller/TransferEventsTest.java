package io.loopcsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;
import io.loopcsi.handoff.TransferProgress;

class TransferEventsTest {

    @Test
    void theClaimComesFromCsiProvisionersExtraCreateMetadata() {
        assertEquals(Optional.of(new TransferEvents.Claim("apps", "data-0")), TransferEvents.claim(Map.of(
                "csi.storage.k8s.io/pvc/name", "data-0", "csi.storage.k8s.io/pvc/namespace", "apps", "csi.storage.k8s.io/pv/name", "pvc-1")));
        assertEquals(Optional.empty(), TransferEvents.claim(Map.of("csi.storage.k8s.io/pvc/name", "data-0")), "no namespace, no claim");
        assertEquals(Optional.empty(), TransferEvents.claim(Map.of()));
        assertEquals(Optional.empty(), TransferEvents.claim(null));
    }

    @Test
    void startedNamesTheSourceNodeAndSize() {
        TransferEvents.Note n = TransferEvents.started("pvc-1", "snap-1", "node-a", "node-b", 64L << 20);
        assertEquals("Normal", n.type());
        assertEquals("TransferStarted", n.reason());
        assertEquals("volume pvc-1 on node node-b: fetching snap-1 (64Mi) from node node-a", n.message());
    }

    @Test
    void finishedGivesBytesDurationAndRate() {
        TransferProgress t = progress(TransferProgress.DONE, 40L << 20, 40L << 20, 10L << 20, "2026-12-06T00:00:00Z", "2026-12-06T00:00:04Z");
        TransferEvents.Note n = TransferEvents.ended(volume(Phase.READY, t)).orElseThrow();
        assertEquals("TransferFinished", n.reason());
        assertEquals("transfer of volume v1 from node node-a to node node-b: 40Mi of data in 4 s (10Mi/s)", n.message());
    }

    @Test
    void failedGivesTheReasonAndHowFarItGot() {
        TransferProgress t = progress(TransferProgress.FAILED, 1L << 20, 4L << 20, 0L, "2026-12-06T00:00:00Z", "2026-12-06T00:00:01Z");
        t.setReason("mismatch: chunk 1's hash differs");
        TransferEvents.Note n = TransferEvents.ended(volume(Phase.FAILED, t)).orElseThrow();
        assertEquals("Warning", n.type());
        assertEquals("TransferFailed", n.reason());
        assertEquals("transfer of volume v1 from node node-a to node node-b failed after 1Mi of 4Mi: mismatch: chunk 1's hash differs",
                n.message());
        // refused before any fetch (the node has no transfer endpoint): the answer's code and message
        LoopVolume refused = volume(Phase.FAILED, null);
        refused.getStatus().setCode("FAILED_PRECONDITION");
        refused.getStatus().setMessage("node node-b has no transfer endpoint");
        assertTrue(TransferEvents.ended(refused).orElseThrow().message().endsWith("failed: FAILED_PRECONDITION: node node-b has no transfer endpoint"));
    }

    @Test
    void aVolumeOfThisNodesOwnContentHasNoTransferEvent() {
        LoopVolume lv = volume(Phase.READY, null);
        lv.getSpec().setTransferId(null);
        assertEquals(Optional.empty(), TransferEvents.ended(lv));
    }

    private static TransferProgress progress(String phase, long done, long total, long rate, String started, String updated) {
        TransferProgress t = new TransferProgress();
        t.setPhase(phase);
        t.setSourceNode("node-a");
        t.setBytesDone(done);
        t.setBytesTotal(total);
        t.setBytesPerSecond(rate);
        t.setStartedAt(started);
        t.setUpdatedAt(updated);
        return t;
    }

    private static LoopVolume volume(String phase, TransferProgress t) {
        LoopVolumeSpec s = new LoopVolumeSpec();
        s.setName("v1");
        s.setNode("node-b");
        s.setSourceNode("node-a");
        s.setTransferId("pvc-1");
        LoopVolume lv = new LoopVolume("p.pvc-1", s);
        LoopVolumeStatus st = new LoopVolumeStatus();
        st.setPhase(phase);
        st.setTransfer(t);
        lv.setStatus(st);
        return lv;
    }
}
