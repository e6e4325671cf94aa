package io.loopcsi.node;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.SectorSizes;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotSpec;
import io.loopcsi.handoff.LoopSnapshotStatus;
import io.loopcsi.handoff.Phase;

/** Carries out one LoopSnapshot of this node: the protocol of {@link HandoffHandler} with the engine's snapshot. */
final class SnapshotHandler extends HandoffHandler<LoopSnapshot, LoopSnapshotStatus, SnapshotMeta> {

    SnapshotHandler(KubernetesClient client, String pool, VolumeProvider engine, Function<String, LoopSnapshot> cache, Runnable changed,
            Duration retry) {
        super(client, LoopSnapshot.class, pool, engine, cache, changed, retry, "snapshot", "image", "<the snapshot ID of spec.name>");
    }

    @Override
    protected boolean valid(LoopSnapshot ls, String id) {
        LoopSnapshotSpec spec = ls.getSpec();
        return spec != null && Ids.isSnapshotId(id) && spec.getName() != null && id.equals(Ids.snapshotIdFor(spec.getName()));
    }

    @Override
    protected Optional<SnapshotMeta> onDisk(String id) {
        return engine.snapshot(id);
    }

    @Override
    protected void deleteFiles(String id) {
        engine.deleteSnapshot(id);
    }

    @Override
    protected LoopSnapshotStatus carryOut(LoopSnapshot ls, String id, Optional<SnapshotMeta> onDisk) {
        SnapshotMeta m = engine.createSnapshot(ls.getSpec().getName(), ls.getSpec().getSourceVolumeId());
        LoopSnapshotStatus s = statusOf(ls, Phase.READY, Codes.OK, "snapshot " + id + " is on node " + engine.nodeId());
        s.setReadyToUse(true);
        s.setSizeBytes(m.sizeBytes());
        s.setSize(Sizes.format(m.sizeBytes()));
        s.setCreationTime(Instant.ofEpochMilli(m.createdAtMillis()).toString());
        s.setLogicalBlockSize(SectorSizes.valid(m.logicalBlockSize()) ? m.logicalBlockSize() : null);
        return s;
    }

    @Override
    protected LoopSnapshotStatus missing(LoopSnapshot ls, String id) {
        LoopSnapshotStatus s = statusOf(ls, Phase.MISSING, "NOT_FOUND", "the image of snapshot " + id + " is gone from the pool directory on node "
                + engine.nodeId());
        s.setReadyToUse(false);
        return s;
    }

    /** A status based on the current one (size and time kept), answering the current generation. */
    @Override
    protected LoopSnapshotStatus statusOf(LoopSnapshot ls, String phase, String code, String message) {
        LoopSnapshotStatus s = new LoopSnapshotStatus();
        LoopSnapshotStatus old = ls.getStatus();
        if (old != null) {
            s.setSizeBytes(old.getSizeBytes());
            s.setSize(old.getSize());
            s.setCreationTime(old.getCreationTime());
            s.setReadyToUse(old.getReadyToUse());
            s.setLogicalBlockSize(old.getLogicalBlockSize());
        }
        s.setPhase(phase);
        s.setCode(code);
        s.setMessage(message);
        s.setObservedGeneration(ls.getMetadata().getGeneration());
        return s;
    }
}
