package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;

/** The node's pure decisions about a LoopVolume's mutable parameters and the status it answers with. */
class VolumeAnswerTest {

    static VolumeMeta volume(Map<String, String> mutable) {
        return new VolumeMeta("vol-0123456789abcdef0123456789abcdef", "pvc-1", 1L << 30, VolumeMode.FILESYSTEM, "xfs", null, null, Map.of(),
                1_700_000_000_000L, mutable);
    }

    static LoopVolumeSpec spec(Map<String, String> mutable) {
        LoopVolumeSpec s = new LoopVolumeSpec();
        s.setMutableParameters(mutable);
        return s;
    }

    @Test
    void theSpecsMutableParametersAreCheckedAsTheControllerChecksThem() {
        assertEquals(MutableParameters.NONE, VolumeHandler.wanted(spec(null)));
        assertEquals(Map.of("provisioning", "thick"), VolumeHandler.wanted(spec(Map.of("provisioning", "THICK"))).given());
        EngineException e = assertThrows(EngineException.class, () -> VolumeHandler.wanted(spec(Map.of("iops", "100"))));
        assertEquals(EngineException.Kind.INVALID_ARGUMENT, e.kind());
        assertTrue(e.getMessage().startsWith("spec.mutableParameters: unknown key \"iops\""), e.getMessage());
    }

    @Test
    void aModifyIsNeededOnlyWhenTheSpecWouldChangeWhatTheVolumeHas() {
        VolumeMeta thin = volume(Map.of());
        assertFalse(VolumeHandler.needsModify(thin, MutableParameters.NONE));
        assertTrue(VolumeHandler.needsModify(thin, new MutableParameters(Map.of("provisioning", "thick"))));
        VolumeMeta thick = volume(Map.of("provisioning", "thick", "directIO", "off"));
        assertFalse(VolumeHandler.needsModify(thick, new MutableParameters(Map.of("provisioning", "thick"))), "a subset already applied");
        assertTrue(VolumeHandler.needsModify(thick, new MutableParameters(Map.of("directIO", "auto"))));
    }

    @Test
    void theReadyAnswerSaysWhatIsAppliedOnTheNode() {
        LoopVolumeStatus s = VolumeHandler.ready(volume(Map.of("provisioning", "thick")), "node-a", 7);
        assertEquals(Phase.READY, s.getPhase());
        assertEquals("OK", s.getCode());
        assertEquals(1L << 30, s.getCapacityBytes());
        assertEquals("1Gi", s.getCapacity());
        assertEquals(7L, s.getObservedGeneration());
        assertEquals("2023-11-14T22:13:20Z", s.getCreatedAt());
        assertEquals(Map.of("provisioning", "thick"), s.getMutableParameters());
        assertEquals("volume vol-0123456789abcdef0123456789abcdef is on node node-a", s.getMessage());
    }

    @Test
    void theReadyAnswerPublishesTheSectorSizeForARestoreOnAnotherNode() {
        assertEquals(4096, VolumeHandler.ready(volume(Map.of()).withLogicalBlockSize(4096), "node-a", 1).getLogicalBlockSize());
        assertNull(VolumeHandler.ready(volume(Map.of()).withLogicalBlockSize(0), "node-a", 1).getLogicalBlockSize(),
                "not decided yet (recorded before sizes were): none published, the destination derives it from the content");
    }
}
