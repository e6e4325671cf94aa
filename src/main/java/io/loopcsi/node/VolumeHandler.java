package io.loopcsi.node;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.SectorSizes;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;

/**
 * Carries out one LoopVolume of this node with the local engine: the protocol of
 * {@link HandoffHandler}. A volume already made takes a new spec by growing and modifying.
 */
final class VolumeHandler extends HandoffHandler<LoopVolume, LoopVolumeStatus, VolumeMeta> {

    /** The client side of cross-node restores and clones; null when this node has no transfer endpoint. */
    private final TransferFetch transfers;

    VolumeHandler(KubernetesClient client, String pool, VolumeProvider engine, Function<String, LoopVolume> cache, Runnable changed,
            Duration retry, TransferFetch transfers) {
        super(client, LoopVolume.class, pool, engine, cache, changed, retry, "volume", "backing file", "<the volume ID of spec.name>");
        this.transfers = transfers;
    }

    @Override
    protected boolean valid(LoopVolume lv, String id) {
        LoopVolumeSpec spec = lv.getSpec();
        return spec != null && Ids.isVolumeId(id) && spec.getName() != null && id.equals(Ids.volumeIdFor(spec.getName()));
    }

    @Override
    protected Optional<VolumeMeta> onDisk(String id) {
        return engine.volume(id);
    }

    @Override
    protected void deleteFiles(String id) {
        engine.deleteVolume(id);
    }

    @Override
    protected LoopVolumeStatus carryOut(LoopVolume lv, String id, Optional<VolumeMeta> onDisk) {
        VolumeMeta m = meetSpec(id, lv.getSpec(), onDisk);
        LoopVolumeStatus s = ready(m, engine.nodeId(), lv.getMetadata().getGeneration());
        // the fetch's end when one ran for this answer, else what the status had (a later generation: the same content)
        s.setTransfer(fetchEnd(lv).orElse(lv.getStatus() == null ? null : lv.getStatus().getTransfer()));
        return s;
    }

    /** The status as it was, observedGeneration too (a snapshot's Missing answers the current generation). */
    @Override
    protected LoopVolumeStatus missing(LoopVolume lv, String id) {
        LoopVolumeStatus s = copy(lv.getStatus());
        s.setPhase(Phase.MISSING);
        s.setReady(false);
        s.setCode("NOT_FOUND");
        s.setMessage("the backing file of " + id + " is gone from the pool directory on node " + engine.nodeId()
                + "; its data is lost (delete the volume)");
        return s;
    }

    @Override
    protected LoopVolumeStatus failed(LoopVolume lv, String code, String message) {
        LoopVolumeStatus s = statusOf(lv, Phase.FAILED, code, message);
        s.setReady(lv.created());
        return s;
    }

    @Override
    protected LoopVolumeStatus failed(LoopVolume lv, String id, EngineException e) {
        LoopVolumeStatus s = super.failed(lv, id, e);
        fetchEnd(lv).ifPresent(s::setTransfer);
        engine.volume(id).ifPresent(now -> { // e.g. grown, then a modify refused: status says what the disk has
            s.setCapacityBytes(now.capacityBytes());
            s.setCapacity(Sizes.format(now.capacityBytes()));
            s.setMutableParameters(new java.util.TreeMap<>(now.mutableParameters()));
        });
        return s;
    }

    /** Writes a refusal only when it says something new: a retry every few seconds writes nothing. */
    @Override
    protected void deleteRefused(LoopVolume lv, String id, EngineException e) {
        LoopVolumeStatus s = statusOf(lv, Phase.DELETE_FAILED, Codes.of(e.kind()), e.getMessage());
        LoopVolumeStatus old = lv.getStatus();
        if (old == null || !Phase.DELETE_FAILED.equals(old.getPhase()) || !Objects.equals(old.getMessage(), s.getMessage())
                || !Objects.equals(old.getObservedGeneration(), s.getObservedGeneration())) {
            log.infof("volume %s: delete refused (%s): %s; trying again every %s", id, e.kind(), e.getMessage(), retry);
            write(lv, s);
        }
    }

    /**
     * The spec on this node's disk: a volume not there yet is created (with its mutable
     * parameters); one that is there grows to spec.requiredBytes and takes spec.mutableParameters
     * (each only when it differs: both engine calls are idempotent, but take the volume's lock).
     */
    private VolumeMeta meetSpec(String id, LoopVolumeSpec spec, Optional<VolumeMeta> onDisk) {
        long required = spec.getRequiredBytes() == null ? 0 : spec.getRequiredBytes();
        long limit = spec.getLimitBytes() == null ? 0 : spec.getLimitBytes();
        MutableParameters wanted = wanted(spec);
        if (onDisk.isEmpty() && spec.getTransferId() != null) {
            return fromOtherNode(spec, required, limit, wanted);
        }
        if (onDisk.isEmpty()) {
            return engine.createVolume(new CreateRequest(spec.getName(), required, limit, spec.getMode(),
                    spec.getFsType() == null ? "" : spec.getFsType(), spec.getSourceSnapshotId(), spec.getSourceVolumeId(),
                    spec.getParameters(), wanted));
        }
        VolumeMeta m = onDisk.get();
        boolean grow = required > m.capacityBytes();
        // thick is re-applied at every generation: the engine then checks the image, not the metadata
        boolean modify = needsModify(m, wanted) || wanted.thick();
        if (grow) {
            m = engine.expandVolume(id, required, limit);
        }
        if (modify) {
            m = engine.modifyVolume(id, wanted);
        }
        if (!grow && !modify && spec.getTransferId() != null) {
            return m; // made from another node's content: its source is not here for the engine's rule; the controller checked the request
        }
        if (!grow && !modify) {
            // a retried spec (raised attempt): the engine's rule for an existing volume answers (same, or ALREADY_EXISTS)
            m = engine.createVolume(new CreateRequest(spec.getName(), required, limit, spec.getMode(),
                    spec.getFsType() == null ? "" : spec.getFsType(), spec.getSourceSnapshotId(), spec.getSourceVolumeId(),
                    spec.getParameters(), wanted));
        }
        return m;
    }

    /**
     * A restore or clone whose source is on spec.sourceNode: the content fetched from there by the
     * transfer the controller authorised, then what a same-node restore does (size, thick).
     */
    private VolumeMeta fromOtherNode(LoopVolumeSpec spec, long required, long limit, MutableParameters wanted) {
        if (transfers == null) {
            throw EngineException.precondition("node " + engine.nodeId() + " has no transfer endpoint (loopcsi.node.transfer-address unset): "
                    + "it cannot fetch the content source from node " + spec.getSourceNode());
        }
        CreateRequest req = new CreateRequest(spec.getName(), required, limit, spec.getMode(), spec.getFsType() == null ? "" : spec.getFsType(),
                spec.getSourceSnapshotId(), spec.getSourceVolumeId(), spec.getParameters(), wanted);
        return transfers.inSlot(spec, () -> transfers.engine().createVolumeFrom(req, transfers.source(spec),
                (image, bytes) -> transfers.fetch(spec, image, bytes)));
    }

    private Optional<io.loopcsi.handoff.TransferProgress> fetchEnd(LoopVolume lv) {
        return transfers == null || lv.getSpec() == null ? Optional.empty() : transfers.end(lv.getSpec().getTransferId());
    }

    /** spec.mutableParameters, checked as the Controller checks them (anyone allowed to write the object could have written it). */
    static MutableParameters wanted(LoopVolumeSpec spec) {
        Map<String, String> m = spec.getMutableParameters();
        return m == null || m.isEmpty() ? MutableParameters.NONE : MutableParameters.parse("spec.mutableParameters", m);
    }

    /** Whether applying wanted would change what the volume has. */
    static boolean needsModify(VolumeMeta onDisk, MutableParameters wanted) {
        return !onDisk.mutable().with(wanted).equals(onDisk.mutable());
    }

    /** The answer to a generation carried out: size, creation time and the mutable parameters now applied. */
    static LoopVolumeStatus ready(VolumeMeta m, String node, long generation) {
        LoopVolumeStatus s = new LoopVolumeStatus();
        s.setPhase(Phase.READY);
        s.setReady(true);
        s.setCapacityBytes(m.capacityBytes());
        s.setCapacity(Sizes.format(m.capacityBytes()));
        s.setCode(Codes.OK);
        s.setMessage("volume " + m.id() + " is on node " + node);
        s.setObservedGeneration(generation);
        s.setCreatedAt(Instant.ofEpochMilli(m.createdAtMillis()).toString());
        s.setMutableParameters(new java.util.TreeMap<>(m.mutableParameters()));
        s.setLogicalBlockSize(SectorSizes.valid(m.logicalBlockSize()) ? m.logicalBlockSize() : null);
        return s;
    }

    @Override
    protected LoopVolumeStatus statusOf(LoopVolume lv, String phase, String code, String message) {
        LoopVolumeStatus s = copy(lv.getStatus());
        s.setPhase(phase);
        s.setCode(code);
        s.setMessage(message);
        s.setObservedGeneration(lv.getMetadata().getGeneration());
        return s;
    }

    private static LoopVolumeStatus copy(LoopVolumeStatus from) {
        LoopVolumeStatus s = new LoopVolumeStatus();
        if (from != null) {
            s.setPhase(from.getPhase());
            s.setReady(from.getReady());
            s.setCapacityBytes(from.getCapacityBytes());
            s.setCapacity(from.getCapacity());
            s.setCode(from.getCode());
            s.setMessage(from.getMessage());
            s.setObservedGeneration(from.getObservedGeneration());
            s.setCreatedAt(from.getCreatedAt());
            s.setMutableParameters(from.getMutableParameters());
            s.setTransfer(from.getTransfer());
            s.setLogicalBlockSize(from.getLogicalBlockSize());
        }
        return s;
    }
}
