package io.loopcsi.controller;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Comparator;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.loopcsi.engine.Condition;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.Phase;

/**
 * Volumes as intents: every CreateVolume, DeleteVolume, expansion and modification is written
 * into the volume's LoopVolume ({@code <pool>.<volume ID>}, named after the request name, so a
 * retried call finds the same object) on the node that holds it or is chosen for it
 * ({@link PoolNodes}), and the call waits for that node's answer ({@link NodeAnswers}). A restore
 * or clone is made on its source's node, or on the node the scheduler picked with the source's
 * content brought by a transfer ({@link TransferIntents}). Reads come from the informers; the object a call decides
 * on is read from the API server.
 */
final class VolumeIntents {

    private static final Logger LOG = Logger.getLogger(VolumeIntents.class);

    private final PoolInformers informers;
    private final PoolNodes nodes;
    private final NodeAnswers answers;
    private final ApiGroupSnapshots groups;
    private final TransferIntents transfers;
    private final KubernetesClient client;
    private final String pool;
    private final String driver;
    private final TransferEvents events;

    VolumeIntents(PoolInformers informers, PoolNodes nodes, NodeAnswers answers, ApiGroupSnapshots groups, TransferIntents transfers,
            KubernetesClient client, String driver) {
        this.transfers = transfers;
        this.informers = informers;
        this.nodes = nodes;
        this.answers = answers;
        this.groups = groups;
        this.client = client;
        this.pool = informers.pool();
        this.driver = driver;
        this.events = new TransferEvents(client);
    }

    VolumeMeta createVolume(CreateRequest req, Placement placement) {
        String id = Ids.volumeIdFor(req.name());
        String name = HandoffNames.object(pool, id);
        Source source = source(req);
        String fsType = req.mode() == VolumeMode.BLOCK ? "" : req.fsType();
        for (int round = 0; round < 3; round++) {
            LoopVolume existing = informers.get(LoopVolume.class, name);
            if (existing == null) {
                String node = place(req, placement, source, fsType);
                LoopVolume lv = new LoopVolume(name, spec(req, fsType, node, source, 0));
                lv.getMetadata().setLabels(HandoffNames.labels(pool, node));
                try {
                    authorise(id, source, node);
                    LoopVolume made = client.resource(lv).create();
                    LOG.infof("CreateVolume %s: LoopVolume %s on node %s%s", req.name(), name, node, crossNode(source, node)
                            ? " from node " + source.node() + " (transfer " + id + ")" : "");
                    started(made, source);
                    return answer(told(awaitVolume(made)));
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 409) {
                        continue; // a concurrent call made it: decide again with it
                    }
                    transfers.release(id);
                    throw e;
                }
            }
            if (existing.getMetadata().getDeletionTimestamp() != null) {
                throw Status.ABORTED.withDescription("volume " + id + " (" + Ids.quote(req.name()) + ") is being deleted; try again")
                        .asRuntimeException();
            }
            if (existing.created()) {
                String conflict = conflict(existing, req, fsType);
                if (conflict == null && !placement.allows(existing.getSpec().getNode())) {
                    conflict = "it lives on node " + existing.getSpec().getNode() + ", outside the requisite topology";
                }
                transfers.release(id); // answered: a transfer a stopped call left goes
                if (conflict != null) {
                    throw EngineException.alreadyExists("volume " + Ids.quote(req.name()) + " already exists as " + id
                            + " with other properties (" + conflict + "); use another name or the same request");
                }
                return meta(existing);
            }
            boolean sameRequest = conflict(existing, req, fsType) == null && placement.allows(existing.getSpec().getNode());
            if (!existing.answered() && sameRequest) {
                if (existing.getSpec().getTransferId() != null) {
                    authorise(id, source, existing.getSpec().getNode()); // renews the window of a long transfer
                }
                return answer(told(awaitVolume(existing))); // in flight: wait for the node's answer
            }
            if (!existing.answered() && existing.getMetadata().getFinalizers() != null
                    && existing.getMetadata().getFinalizers().contains(HandoffNames.FINALIZER)) {
                throw Status.ABORTED.withDescription("volume " + id + " is being made on node " + existing.getSpec().getNode()
                        + " from another request with the same name; try again when it is done").asRuntimeException();
            }
            // never made (failed, or not started): try again with this request, placed anew
            String node = place(req, placement, source, fsType);
            long attempt = existing.getSpec().getAttempt() == null ? 0 : existing.getSpec().getAttempt();
            LoopVolumeSpec next = spec(req, fsType, node, source, attempt + 1);
            authorise(id, source, node);
            LoopVolume edited = client.resources(LoopVolume.class).withName(name).edit(o -> {
                o.setSpec(next);
                o.getMetadata().setLabels(HandoffNames.labels(pool, node));
                return o;
            });
            LOG.infof("CreateVolume %s: trying LoopVolume %s again on node %s (attempt %d)", req.name(), name, node, attempt + 1);
            started(edited, source);
            return answer(told(awaitVolume(edited)));
        }
        throw Status.ABORTED.withDescription("volume " + id + " keeps changing under concurrent calls; try again").asRuntimeException();
    }

    /** TransferStarted on the claim, when the intent written brings its content from another node. */
    private void started(LoopVolume written, Source source) {
        LoopVolumeSpec s = written.getSpec();
        if (s.getTransferId() != null && source != null) {
            events.record(s.getParameters(), TransferEvents.started(s.getTransferId(), source.id(), source.node(), s.getNode(),
                    source.sizeBytes()));
        }
    }

    /** TransferFinished or TransferFailed on the claim, from the node's answer of a volume made from another node. */
    private LoopVolume told(LoopVolume answered) {
        TransferEvents.ended(answered).ifPresent(n -> events.record(answered.getSpec().getParameters(), n));
        return answered;
    }

    /** The content source as the controller knows it: its node, ID, size, and mode and fsType when known. */
    /** @param logicalBlockSize the source's sector size as its node published it; null when it did not (an older node) */
    record Source(String node, String id, long sizeBytes, VolumeMode mode, String fsType, Integer logicalBlockSize) {
    }

    private static boolean crossNode(Source source, String node) {
        return source != null && !source.node().equals(node);
    }

    /**
     * The node of a new volume. Without a content source: the chooser's. With one: its source's node
     * when the requirements allow it and do not prefer another node first; else (the scheduler
     * picked another node) the chooser's node, reached by a transfer, when both nodes serve
     * transfers. A restore or clone that cannot be made on the source's node nor moved is
     * RESOURCE_EXHAUSTED naming why.
     */
    private String place(CreateRequest req, Placement placement, Source source, String fsType) {
        long bytes = Math.max(req.requiredBytes(), Sizes.MIB);
        if (source == null) {
            return nodes.choose(placement, bytes, req.mutable().thick());
        }
        String first = placement.preferred().stream().filter(p -> p != null && placement.allows(p)).findFirst().orElse(null);
        boolean sourceAllowed = placement.allows(source.node());
        if (sourceAllowed && (first == null || first.equals(source.node()))) {
            return source.node();
        }
        if (source.mode() != null && (source.mode() != req.mode()
                || (req.mode() == VolumeMode.FILESYSTEM && !Objects.equals(source.fsType(), fsType)))) {
            throw EngineException.invalid("volume_content_source: " + source.id() + " is a " + source.mode()
                    + (source.mode() == VolumeMode.FILESYSTEM ? " " + source.fsType() : "") + " volume, the request asks for " + req.mode()
                    + (req.mode() == VolumeMode.FILESYSTEM ? " " + fsType : "") + "; a volume restored or cloned keeps its source's mode");
        }
        String chosen;
        try {
            chosen = nodes.choose(placement, Math.max(bytes, source.sizeBytes()), req.mutable().thick());
        } catch (io.grpc.StatusRuntimeException e) {
            if (sourceAllowed) {
                return source.node();
            }
            throw e;
        }
        if (chosen.equals(source.node())) {
            return chosen;
        }
        String why = transfers.whyNot(source.node(), chosen);
        if (why == null) {
            return chosen;
        }
        if (sourceAllowed) {
            return source.node(); // made where the source is, as before transfers
        }
        throw Status.RESOURCE_EXHAUSTED.withDescription("volume_content_source " + source.id() + " lives on node " + source.node()
                + ", outside the requisite topology, and cannot be moved to node " + chosen + ": " + why).asRuntimeException();
    }

    /** Writes the LoopTransfer before the intent that needs it (a same-node volume needs none). */
    private void authorise(String volumeId, Source source, String node) {
        if (crossNode(source, node)) {
            transfers.authorise(volumeId, source.id(), source.node(), node, source.sizeBytes(), source.logicalBlockSize());
        }
    }

    private LoopVolumeSpec spec(CreateRequest req, String fsType, String node, Source source, long attempt) {
        LoopVolumeSpec s = new LoopVolumeSpec();
        s.setPool(pool);
        s.setDriver(driver);
        s.setNode(node);
        s.setName(req.name());
        s.setRequiredBytes(req.requiredBytes());
        s.setLimitBytes(req.limitBytes());
        s.setMode(req.mode());
        s.setFsType(fsType);
        s.setSourceSnapshotId(req.sourceSnapshotId());
        s.setSourceVolumeId(req.sourceVolumeId());
        if (crossNode(source, node)) {
            s.setSourceNode(source.node());
            s.setTransferId(Ids.volumeIdFor(req.name()));
        }
        s.setParameters(req.parameters() == null ? Map.of() : new HashMap<>(req.parameters()));
        s.setMutableParameters(new java.util.TreeMap<>(req.mutable().given()));
        s.setAttempt(attempt);
        return s;
    }

    /** The request's content source (null without one); NOT_FOUND when it does not exist. */
    private Source source(CreateRequest req) {
        if (req.sourceSnapshotId() != null) {
            String sid = req.sourceSnapshotId();
            LoopSnapshot s = Ids.isSnapshotId(sid) ? informers.get(LoopSnapshot.class, HandoffNames.object(pool, sid)) : null;
            if (s == null || !s.created()) {
                ApiGroupSnapshots.Member m = (Ids.isSnapshotId(sid) ? groups.member(sid, true) : Optional.<ApiGroupSnapshots.Member>empty())
                        .orElseThrow(() -> EngineException.notFound("source snapshot " + sid + " does not exist"));
                LoopVolume of = informers.cachedVolume(m.member().getSourceVolumeId());
                return new Source(m.group().getSpec().getNode(), sid, m.member().getSizeBytes() == null ? 0 : m.member().getSizeBytes(),
                        of == null ? null : of.getSpec().getMode(), of == null ? null : of.getSpec().getFsType(),
                        m.member().getLogicalBlockSize());
            }
            LoopVolume of = informers.cachedVolume(s.getSpec().getSourceVolumeId());
            return new Source(s.getSpec().getNode(), sid, s.getStatus().getSizeBytes() == null ? 0 : s.getStatus().getSizeBytes(),
                    of == null ? null : of.getSpec().getMode(), of == null ? null : of.getSpec().getFsType(),
                    s.getStatus().getLogicalBlockSize());
        }
        if (req.sourceVolumeId() != null) {
            LoopVolume v = Ids.isVolumeId(req.sourceVolumeId()) ? informers.get(LoopVolume.class, HandoffNames.object(pool, req.sourceVolumeId())) : null;
            if (v == null || !v.created()) {
                throw EngineException.notFound("source volume " + req.sourceVolumeId() + " does not exist");
            }
            return new Source(v.getSpec().getNode(), req.sourceVolumeId(), v.getStatus().getCapacityBytes(), v.getSpec().getMode(),
                    v.getSpec().getFsType(), v.getStatus().getLogicalBlockSize());
        }
        return null;
    }

    /** How an existing volume differs from a create request (the engine's rule), or null when it does not. */
    private static String conflict(LoopVolume v, CreateRequest req, String fsType) {
        LoopVolumeSpec s = v.getSpec();
        List<String> diffs = new java.util.ArrayList<>();
        if (s.getMode() != req.mode()) {
            diffs.add("mode " + s.getMode() + " vs " + req.mode());
        }
        if (!Objects.equals(Objects.toString(s.getFsType(), ""), fsType)) {
            diffs.add("fsType " + s.getFsType() + " vs " + fsType);
        }
        if (v.created()) {
            long cap = v.getStatus().getCapacityBytes();
            if (cap < req.requiredBytes() || (req.limitBytes() > 0 && cap > req.limitBytes())) {
                diffs.add("capacity " + cap + " outside [" + req.requiredBytes() + ", " + (req.limitBytes() > 0 ? req.limitBytes() : "unlimited") + "]");
            }
        } else if (!Objects.equals(s.getRequiredBytes(), req.requiredBytes()) || !Objects.equals(s.getLimitBytes(), req.limitBytes())) {
            diffs.add("capacity range differs");
        }
        if (!Objects.equals(s.getSourceSnapshotId(), req.sourceSnapshotId()) || !Objects.equals(s.getSourceVolumeId(), req.sourceVolumeId())) {
            diffs.add("content source differs");
        }
        Map<String, String> p = s.getParameters() == null ? Map.of() : s.getParameters();
        if (!p.equals(req.parameters() == null ? Map.of() : req.parameters())) {
            diffs.add("parameters differ");
        }
        return diffs.isEmpty() ? null : String.join("; ", diffs);
    }

    void deleteVolume(String volumeId) {
        Ids.requireVolumeId(volumeId);
        String name = HandoffNames.object(pool, volumeId);
        transfers.checkNotHeld(volumeId, "volume " + volumeId);
        transfers.release(volumeId); // its own transfer, when it was being made from another node
        answers.awaitGone(LoopVolume.class, name, "volume " + volumeId);
    }

    Optional<VolumeMeta> volume(String volumeId) {
        if (!Ids.isVolumeId(volumeId)) {
            return Optional.empty();
        }
        LoopVolume v = informers.get(LoopVolume.class, HandoffNames.object(pool, volumeId));
        return v != null && v.created() ? Optional.of(meta(v)) : Optional.empty();
    }

    List<VolumeMeta> volumes() {
        return informers.volumes().stream().filter(LoopVolume::created).map(this::meta)
                .sorted(Comparator.comparing(VolumeMeta::id)).toList();
    }

    String nodeOf(String volumeId) {
        LoopVolume v = informers.cachedVolume(volumeId);
        if (v == null) {
            v = informers.get(LoopVolume.class, HandoffNames.object(pool, volumeId));
        }
        return v == null ? "" : v.getSpec().getNode();
    }

    Condition condition(String volumeId) {
        // from the informer: ListVolumes asks this of every volume; from the API server when the cache
        // lags behind (a volume CreateVolume just answered can still be pending there: not "does not exist")
        LoopVolume v = Ids.isVolumeId(volumeId) ? informers.cachedVolume(volumeId) : null;
        if ((v == null || !v.created()) && Ids.isVolumeId(volumeId)) {
            v = informers.get(LoopVolume.class, HandoffNames.object(pool, volumeId));
        }
        if (v == null || !v.created()) {
            throw EngineException.notFound("volume " + volumeId + " does not exist");
        }
        if (Phase.MISSING.equals(v.getStatus().getPhase())) {
            return Condition.abnormal(v.getStatus().getMessage());
        }
        LoopPoolNode n = nodes.serving(v.getSpec().getNode());
        if (n == null) {
            String last = nodes.lastReport(v.getSpec().getNode());
            return Condition.abnormal("node " + v.getSpec().getNode() + " holding the volume has not reported since "
                    + (last == null ? "ever" : last));
        }
        String why = n.getStatus().abnormal(volumeId);
        if (why != null) {
            return Condition.abnormal(why); // what the node found, e.g. a thick image it cannot allocate whole again
        }
        return Condition.HEALTHY;
    }

    VolumeMeta expandVolume(String volumeId, long requiredBytes, long limitBytes) {
        Ids.requireVolumeId(volumeId);
        String name = HandoffNames.object(pool, volumeId);
        LoopVolume v = informers.get(LoopVolume.class, name);
        if (v == null || !v.created()) {
            throw EngineException.notFound("volume " + volumeId + " does not exist");
        }
        if (v.getMetadata().getDeletionTimestamp() != null) {
            throw EngineException.precondition("volume " + volumeId + " is being deleted (" + Objects.toString(v.getStatus().getMessage(), "")
                    + ")");
        }
        long cap = v.getStatus().getCapacityBytes();
        if (requiredBytes == 0 || requiredBytes <= cap) {
            if (limitBytes > 0 && cap > limitBytes) {
                throw EngineException.outOfRange("volume " + volumeId + " is already " + cap + " bytes, above limit_bytes " + limitBytes
                        + "; volumes never shrink");
            }
            return meta(v);
        }
        boolean retry = v.answered() && Phase.FAILED.equals(v.getStatus().getPhase())
                && Objects.equals(v.getSpec().getRequiredBytes(), requiredBytes) && Objects.equals(v.getSpec().getLimitBytes(), limitBytes);
        LoopVolume edited = client.resources(LoopVolume.class).withName(name).edit(o -> {
            o.getSpec().setRequiredBytes(requiredBytes);
            o.getSpec().setLimitBytes(limitBytes);
            if (retry) {
                o.getSpec().setAttempt((o.getSpec().getAttempt() == null ? 0 : o.getSpec().getAttempt()) + 1);
            }
            return o;
        });
        LOG.infof("ControllerExpandVolume %s: to %s on node %s", volumeId, Sizes.format(requiredBytes), v.getSpec().getNode());
        return answer(awaitVolume(edited));
    }

    private LoopVolume awaitVolume(LoopVolume written) {
        long generation = written.getMetadata().getGeneration() == null ? 1 : written.getMetadata().getGeneration();
        return answers.await(LoopVolume.class, written.getMetadata().getName(), written.getSpec().getNode(),
                lv -> lv.answered() && lv.getMetadata().getGeneration() >= generation, "volume " + written.getMetadata().getName());
    }

    private VolumeMeta answer(LoopVolume lv) {
        if (lv.getSpec().getTransferId() != null) {
            transfers.release(HandoffNames.idOf(pool, lv.getMetadata().getName())); // answered: the source is free again
        }
        String phase = lv.getStatus().getPhase();
        if (Phase.READY.equals(phase)) {
            return meta(lv);
        }
        throw Codes.status(lv.getStatus().getCode(), "node " + lv.getSpec().getNode() + ": " + lv.getStatus().getMessage()).asRuntimeException();
    }

    private VolumeMeta meta(LoopVolume lv) {
        LoopVolumeSpec s = lv.getSpec();
        return new VolumeMeta(HandoffNames.idOf(pool, lv.getMetadata().getName()), s.getName(), lv.getStatus().getCapacityBytes(), s.getMode(),
                s.getFsType(), s.getSourceSnapshotId(), s.getSourceVolumeId(), s.getParameters(),
                ObjectTimes.millis(lv.getStatus().getCreatedAt(), lv.getMetadata().getCreationTimestamp()), lv.getStatus().getMutableParameters());
    }

    /**
     * Writes the volume's mutable parameters with the changes into spec.mutableParameters and
     * waits for the node to apply them, as an expansion does. A node's refusal (e.g. thick on a
     * host that cannot hold it) puts the spec back to what the node reports applied, so that
     * nothing changes and a later generation (an expansion) does not try the refused change
     * again; a timeout or a silent node keeps the intent recorded, as for every other call.
     */
    VolumeMeta modifyVolume(String volumeId, MutableParameters changes) {
        Ids.requireVolumeId(volumeId);
        String name = HandoffNames.object(pool, volumeId);
        LoopVolume v = informers.get(LoopVolume.class, name);
        if (v == null || !v.created()) {
            throw EngineException.notFound("volume " + volumeId + " does not exist");
        }
        if (v.getMetadata().getDeletionTimestamp() != null) {
            throw EngineException.precondition("volume " + volumeId + " is being deleted");
        }
        Map<String, String> wanted = MutableSpec.of(v.getSpec().getMutableParameters());
        Map<String, String> next = MutableSpec.next(wanted, changes);
        LoopVolume written = v;
        // provisioning=thick asked again is never "applied already": the node checks the image, not its
        // metadata (a trim inside may have punched holes), so it gets a new generation to answer
        boolean recheckThick = changes.thick();
        if (!next.equals(wanted) || recheckThick || (v.answered() && !(Phase.READY.equals(v.getStatus().getPhase())
                && next.equals(MutableSpec.of(v.getStatus().getMutableParameters()))))) {
            boolean again = next.equals(wanted); // the node answered these already and failed: have it try again
            written = client.resources(LoopVolume.class).withName(name).edit(o -> {
                o.getSpec().setMutableParameters(next);
                if (again) {
                    o.getSpec().setAttempt((o.getSpec().getAttempt() == null ? 0 : o.getSpec().getAttempt()) + 1);
                }
                return o;
            });
        } else if (v.answered()) {
            return meta(v); // already applied
        }
        LOG.infof("ControllerModifyVolume %s: %s on node %s", volumeId, next, v.getSpec().getNode());
        LoopVolume answered = awaitVolume(written);
        if (!Phase.READY.equals(answered.getStatus().getPhase())) {
            revert(name, next, answered.getStatus().getMutableParameters());
        }
        return answer(answered);
    }

    /** Puts spec.mutableParameters back to what the node applied, unless another call changed them meanwhile. */
    private void revert(String name, Map<String, String> refused, Map<String, String> applied) {
        try {
            client.resources(LoopVolume.class).withName(name).edit(o -> {
                if (refused.equals(MutableSpec.of(o.getSpec().getMutableParameters()))) {
                    o.getSpec().setMutableParameters(MutableSpec.of(applied));
                }
                return o;
            });
        } catch (KubernetesClientException e) {
            LOG.warnf("volume %s: cannot put back the mutable parameters the node refused (%s): %s", name, refused, e.getMessage());
        }
    }
}
