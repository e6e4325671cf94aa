package io.loopcsi.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.grpc.Status;
import io.loopcsi.engine.Condition;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotSpec;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.Phase;

/**
 * The controller role's volume provider: volumes live on the nodes, so every change is written
 * as intent into a LoopVolume/LoopSnapshot ({@code <pool>.<ID>}; group snapshots: {@link ApiGroupSnapshots}) on the chosen node, and the call
 * waits, with a bound, for that node's answer in status. A node whose heartbeat is stale gets
 * UNAVAILABLE at once; a node that does not answer in time gets DEADLINE_EXCEEDED; both are
 * retryable, and the intent stays recorded for when the node comes back. A node's failure
 * surfaces with the node's own gRPC code and message. Reads come from informers of the pool's
 * objects; the object a call decides on is read from the API server.
 */
public class ApiVolumeProvider implements VolumeProvider, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ApiVolumeProvider.class);
    private static final long POLL_MILLIS = 1000;

    private final KubernetesClient client;
    private final String pool;
    private final String driver;
    private final Duration answerTimeout;
    private final Duration staleAfter;
    private final Clock clock;
    private final Object changes = new Object();
    private SharedIndexInformer<LoopVolume> volumes;
    private SharedIndexInformer<LoopSnapshot> snapshots;
    private SharedIndexInformer<LoopGroupSnapshot> groups;
    private SharedIndexInformer<LoopPoolNode> nodes;
    private ApiGroupSnapshots groupSnapshots;

    public ApiVolumeProvider(KubernetesClient client, String pool, String driver, Duration answerTimeout, Duration staleAfter, Clock clock) {
        this.client = client;
        this.pool = pool;
        this.driver = driver;
        this.answerTimeout = answerTimeout;
        this.staleAfter = staleAfter;
        this.clock = clock;
    }

    /** Starts the informers of the pool's objects and waits for their first list. */
    public ApiVolumeProvider start() {
        volumes = client.resources(LoopVolume.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        snapshots = client.resources(LoopSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        groups = client.resources(LoopGroupSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        nodes = client.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        volumes.addEventHandler(wake());
        snapshots.addEventHandler(wake());
        groups.addEventHandler(wake());
        groupSnapshots = new ApiGroupSnapshots(this, client, pool, driver, groups);
        nodes.addEventHandler(wake());
        try {
            volumes.start().toCompletableFuture().get(60, TimeUnit.SECONDS);
            snapshots.start().toCompletableFuture().get(60, TimeUnit.SECONDS);
            groups.start().toCompletableFuture().get(60, TimeUnit.SECONDS);
            nodes.start().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot list the LoopVolumes, LoopSnapshots, LoopGroupSnapshots and LoopPoolNodes of pool " + pool
                    + ": " + e, e);
        }
        return this;
    }

    private <T> ResourceEventHandler<T> wake() {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                signal();
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                signal();
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                signal();
            }
        };
    }

    private void signal() {
        synchronized (changes) {
            changes.notifyAll();
        }
    }

    @Override
    public void close() {
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] { volumes, snapshots, groups, nodes }) {
            if (i != null) {
                i.close();
            }
        }
    }

    @Override
    public String nodeId() {
        return "(controller of pool " + pool + ")";
    }

    // ---- volumes ----------------------------------------------------------------------------

    @Override
    public VolumeMeta createVolume(CreateRequest req) {
        return createVolume(req, Placement.ANYWHERE);
    }

    @Override
    public VolumeMeta createVolume(CreateRequest req, Placement placement) {
        String id = Ids.volumeIdFor(req.name());
        String name = HandoffNames.object(pool, id);
        String sourceNode = sourceNode(req);
        if (sourceNode != null && !placement.allows(sourceNode)) {
            throw Status.RESOURCE_EXHAUSTED.withDescription("volume_content_source lives on node " + sourceNode
                    + ", outside the requisite topology; a restore or clone is made on its source's node").asRuntimeException();
        }
        String fsType = req.mode() == VolumeMode.BLOCK ? "" : req.fsType();
        for (int round = 0; round < 3; round++) {
            LoopVolume existing = get(LoopVolume.class, name);
            if (existing == null) {
                String node = sourceNode != null ? sourceNode
                        : NodeChooser.choose(placement, Math.max(req.requiredBytes(), Sizes.MIB), req.mutable().thick(), nodeMap(), clock.instant(), staleAfter);
                LoopVolume lv = new LoopVolume(name, spec(req, fsType, node, 0));
                lv.getMetadata().setLabels(HandoffNames.labels(pool, node));
                try {
                    LoopVolume made = client.resource(lv).create();
                    LOG.infof("CreateVolume %s: LoopVolume %s on node %s", req.name(), name, node);
                    return answer(awaitVolume(made));
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 409) {
                        continue; // a concurrent call made it: decide again with it
                    }
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
                if (conflict != null) {
                    throw EngineException.alreadyExists("volume " + Ids.quote(req.name()) + " already exists as " + id
                            + " with other properties (" + conflict + "); use another name or the same request");
                }
                return meta(existing);
            }
            boolean sameRequest = conflict(existing, req, fsType) == null && placement.allows(existing.getSpec().getNode());
            if (!existing.answered() && sameRequest) {
                return answer(awaitVolume(existing)); // in flight: wait for the node's answer
            }
            if (!existing.answered() && existing.getMetadata().getFinalizers() != null
                    && existing.getMetadata().getFinalizers().contains(HandoffNames.FINALIZER)) {
                throw Status.ABORTED.withDescription("volume " + id + " is being made on node " + existing.getSpec().getNode()
                        + " from another request with the same name; try again when it is done").asRuntimeException();
            }
            // never made (failed, or not started): try again with this request, placed anew
            String node = sourceNode != null ? sourceNode
                    : NodeChooser.choose(placement, Math.max(req.requiredBytes(), Sizes.MIB), req.mutable().thick(), nodeMap(), clock.instant(), staleAfter);
            long attempt = existing.getSpec().getAttempt() == null ? 0 : existing.getSpec().getAttempt();
            LoopVolumeSpec next = spec(req, fsType, node, attempt + 1);
            LoopVolume edited = client.resources(LoopVolume.class).withName(name).edit(o -> {
                o.setSpec(next);
                o.getMetadata().setLabels(HandoffNames.labels(pool, node));
                return o;
            });
            LOG.infof("CreateVolume %s: trying LoopVolume %s again on node %s (attempt %d)", req.name(), name, node, attempt + 1);
            return answer(awaitVolume(edited));
        }
        throw Status.ABORTED.withDescription("volume " + id + " keeps changing under concurrent calls; try again").asRuntimeException();
    }

    private LoopVolumeSpec spec(CreateRequest req, String fsType, String node, long attempt) {
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
        s.setParameters(req.parameters() == null ? Map.of() : new HashMap<>(req.parameters()));
        s.setMutableParameters(new java.util.TreeMap<>(req.mutable().given()));
        s.setAttempt(attempt);
        return s;
    }

    /** The node of the request's content source (restores and clones are made there), or null; NOT_FOUND when it does not exist. */
    private String sourceNode(CreateRequest req) {
        if (req.sourceSnapshotId() != null) {
            LoopSnapshot s = Ids.isSnapshotId(req.sourceSnapshotId()) ? get(LoopSnapshot.class, HandoffNames.object(pool, req.sourceSnapshotId()))
                    : null;
            if (s == null || !s.created()) {
                Optional<ApiGroupSnapshots.Member> m = Ids.isSnapshotId(req.sourceSnapshotId())
                        ? groupSnapshots.member(req.sourceSnapshotId(), true) : Optional.empty();
                return m.map(x -> x.group().getSpec().getNode())
                        .orElseThrow(() -> EngineException.notFound("source snapshot " + req.sourceSnapshotId() + " does not exist"));
            }
            return s.getSpec().getNode();
        }
        if (req.sourceVolumeId() != null) {
            LoopVolume v = Ids.isVolumeId(req.sourceVolumeId()) ? get(LoopVolume.class, HandoffNames.object(pool, req.sourceVolumeId())) : null;
            if (v == null || !v.created()) {
                throw EngineException.notFound("source volume " + req.sourceVolumeId() + " does not exist");
            }
            return v.getSpec().getNode();
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

    @Override
    public void deleteVolume(String volumeId) {
        Ids.requireVolumeId(volumeId);
        String name = HandoffNames.object(pool, volumeId);
        awaitGone(LoopVolume.class, name, "volume " + volumeId);
    }

    @Override
    public Optional<VolumeMeta> volume(String volumeId) {
        if (!Ids.isVolumeId(volumeId)) {
            return Optional.empty();
        }
        LoopVolume v = get(LoopVolume.class, HandoffNames.object(pool, volumeId));
        return v != null && v.created() ? Optional.of(meta(v)) : Optional.empty();
    }

    @Override
    public List<VolumeMeta> volumes() {
        return volumes.getStore().list().stream().filter(LoopVolume::created).map(this::meta)
                .sorted(Comparator.comparing(VolumeMeta::id)).toList();
    }

    @Override
    public String nodeOf(String volumeId) {
        LoopVolume v = volumes.getStore().getByKey(HandoffNames.object(pool, volumeId));
        if (v == null) {
            v = get(LoopVolume.class, HandoffNames.object(pool, volumeId));
        }
        return v == null ? "" : v.getSpec().getNode();
    }

    @Override
    public Condition condition(String volumeId) {
        // from the informer: ListVolumes asks this of every volume
        LoopVolume v = Ids.isVolumeId(volumeId) ? volumes.getStore().getByKey(HandoffNames.object(pool, volumeId)) : null;
        if (v == null && Ids.isVolumeId(volumeId)) {
            v = get(LoopVolume.class, HandoffNames.object(pool, volumeId));
        }
        if (v == null || !v.created()) {
            throw EngineException.notFound("volume " + volumeId + " does not exist");
        }
        if (Phase.MISSING.equals(v.getStatus().getPhase())) {
            return Condition.abnormal(v.getStatus().getMessage());
        }
        LoopPoolNode n = nodes.getStore().getByKey(HandoffNames.poolNode(pool, v.getSpec().getNode()));
        if (!NodeChooser.fresh(n, clock.instant(), staleAfter)) {
            return Condition.abnormal("node " + v.getSpec().getNode() + " holding the volume has not reported since "
                    + (n == null || n.getStatus() == null ? "ever" : n.getStatus().getHeartbeatTime()));
        }
        String why = n.getStatus().abnormal(volumeId);
        if (why != null) {
            return Condition.abnormal(why); // what the node found, e.g. a thick image it cannot allocate whole again
        }
        return Condition.HEALTHY;
    }

    @Override
    public VolumeMeta expandVolume(String volumeId, long requiredBytes, long limitBytes) {
        Ids.requireVolumeId(volumeId);
        String name = HandoffNames.object(pool, volumeId);
        LoopVolume v = get(LoopVolume.class, name);
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
        return await(LoopVolume.class, written.getMetadata().getName(), written.getSpec().getNode(),
                lv -> lv.answered() && lv.getMetadata().getGeneration() >= generation, "volume " + written.getMetadata().getName());
    }

    private VolumeMeta answer(LoopVolume lv) {
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
                millis(lv.getStatus().getCreatedAt(), lv.getMetadata().getCreationTimestamp()), lv.getStatus().getMutableParameters());
    }

    // ---- mutable parameters -----------------------------------------------------------------

    @Override
    public boolean modifiable() {
        return true;
    }

    /**
     * Writes the volume's mutable parameters with the changes into spec.mutableParameters and
     * waits for the node to apply them, as an expansion does. A node's refusal (e.g. thick on a
     * host that cannot hold it) puts the spec back to what the node reports applied, so that
     * nothing changes and a later generation (an expansion) does not try the refused change
     * again; a timeout or a silent node keeps the intent recorded, as for every other call.
     */
    @Override
    public VolumeMeta modifyVolume(String volumeId, MutableParameters changes) {
        Ids.requireVolumeId(volumeId);
        String name = HandoffNames.object(pool, volumeId);
        LoopVolume v = get(LoopVolume.class, name);
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

    // ---- snapshots --------------------------------------------------------------------------

    @Override
    public SnapshotMeta createSnapshot(String requestName, String sourceVolumeId) {
        String id = Ids.snapshotIdFor(requestName);
        Ids.requireVolumeId(sourceVolumeId);
        String name = HandoffNames.object(pool, id);
        for (int round = 0; round < 3; round++) {
            LoopSnapshot existing = get(LoopSnapshot.class, name);
            if (existing == null) {
                LoopVolume src = get(LoopVolume.class, HandoffNames.object(pool, sourceVolumeId));
                if (src == null || !src.created()) {
                    throw EngineException.notFound("source volume " + sourceVolumeId + " does not exist");
                }
                if (src.getMetadata().getDeletionTimestamp() != null) {
                    throw EngineException.precondition("source volume " + sourceVolumeId + " is being deleted");
                }
                LoopSnapshotSpec spec = new LoopSnapshotSpec();
                spec.setPool(pool);
                spec.setDriver(driver);
                spec.setNode(src.getSpec().getNode());
                spec.setName(requestName);
                spec.setSourceVolumeId(sourceVolumeId);
                LoopSnapshot ls = new LoopSnapshot(name, spec);
                ls.getMetadata().setLabels(HandoffNames.labels(pool, spec.getNode()));
                try {
                    LoopSnapshot made = client.resource(ls).create();
                    LOG.infof("CreateSnapshot %s: LoopSnapshot %s on node %s", requestName, name, spec.getNode());
                    return snapshotAnswer(awaitSnapshot(made));
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 409) {
                        continue;
                    }
                    throw e;
                }
            }
            if (!sourceVolumeId.equals(existing.getSpec().getSourceVolumeId())) {
                throw EngineException.alreadyExists("snapshot " + Ids.quote(requestName) + " already exists as " + id + " of volume "
                        + existing.getSpec().getSourceVolumeId() + ", not of " + sourceVolumeId);
            }
            if (existing.getMetadata().getDeletionTimestamp() != null) {
                throw Status.ABORTED.withDescription("snapshot " + id + " is being deleted; try again").asRuntimeException();
            }
            if (existing.created()) {
                return snapshotMeta(existing);
            }
            if (!existing.answered()) {
                return snapshotAnswer(awaitSnapshot(existing));
            }
            LoopSnapshot edited = client.resources(LoopSnapshot.class).withName(name).edit(o -> {
                o.getSpec().setAttempt((o.getSpec().getAttempt() == null ? 0 : o.getSpec().getAttempt()) + 1);
                return o;
            });
            return snapshotAnswer(awaitSnapshot(edited));
        }
        throw Status.ABORTED.withDescription("snapshot " + id + " keeps changing under concurrent calls; try again").asRuntimeException();
    }

    private LoopSnapshot awaitSnapshot(LoopSnapshot written) {
        long generation = written.getMetadata().getGeneration() == null ? 1 : written.getMetadata().getGeneration();
        return await(LoopSnapshot.class, written.getMetadata().getName(), written.getSpec().getNode(),
                ls -> ls.answered() && ls.getMetadata().getGeneration() >= generation, "snapshot " + written.getMetadata().getName());
    }

    private SnapshotMeta snapshotAnswer(LoopSnapshot ls) {
        if (Phase.READY.equals(ls.getStatus().getPhase())) {
            return snapshotMeta(ls);
        }
        throw Codes.status(ls.getStatus().getCode(), "node " + ls.getSpec().getNode() + ": " + ls.getStatus().getMessage()).asRuntimeException();
    }

    /** The volume as the informer has it (null when unknown). */
    LoopVolume cachedVolume(String volumeId) {
        return volumes.getStore().getByKey(HandoffNames.object(pool, volumeId));
    }

    private SnapshotMeta snapshotMeta(LoopSnapshot ls) {
        LoopVolume src = volumes.getStore().getByKey(HandoffNames.object(pool, ls.getSpec().getSourceVolumeId()));
        return new SnapshotMeta(HandoffNames.idOf(pool, ls.getMetadata().getName()), ls.getSpec().getName(), ls.getSpec().getSourceVolumeId(),
                ls.getStatus().getSizeBytes(), src == null ? null : src.getSpec().getMode(), src == null ? null : src.getSpec().getFsType(),
                millis(ls.getStatus().getCreationTime(), ls.getMetadata().getCreationTimestamp()));
    }

    /**
     * A member of a group snapshot goes with its group (DeleteVolumeGroupSnapshot): refused with
     * FAILED_PRECONDITION, as the spec has for a snapshot with dependants.
     */
    @Override
    public void deleteSnapshot(String snapshotId) {
        Ids.requireSnapshotId(snapshotId);
        String name = HandoffNames.object(pool, snapshotId);
        if (get(LoopSnapshot.class, name) == null) {
            Optional<ApiGroupSnapshots.Member> m = groupSnapshots.member(snapshotId, true);
            if (m.isPresent()) {
                throw EngineException.precondition("snapshot " + snapshotId + " is a member of group snapshot "
                        + HandoffNames.idOf(pool, m.get().group().getMetadata().getName()) + "; delete the group snapshot");
            }
        }
        awaitGone(LoopSnapshot.class, name, "snapshot " + snapshotId);
    }

    @Override
    public Optional<SnapshotMeta> snapshot(String snapshotId) {
        if (!Ids.isSnapshotId(snapshotId)) {
            return Optional.empty();
        }
        LoopSnapshot s = get(LoopSnapshot.class, HandoffNames.object(pool, snapshotId));
        if (s != null && s.created()) {
            return Optional.of(snapshotMeta(s));
        }
        return groupSnapshots.member(snapshotId, true).map(groupSnapshots::memberMeta);
    }

    /** The pool's snapshots: those of LoopSnapshots and the members of its group snapshots. */
    @Override
    public List<SnapshotMeta> snapshots() {
        List<SnapshotMeta> all = new java.util.ArrayList<>();
        snapshots.getStore().list().stream().filter(LoopSnapshot::created).map(this::snapshotMeta).forEach(all::add);
        all.addAll(groupSnapshots.members());
        all.sort(Comparator.comparing(SnapshotMeta::id));
        return all;
    }

    // ---- group snapshots (ApiGroupSnapshots) -------------------------------------------------

    @Override
    public boolean groupSnapshots() {
        return true;
    }

    @Override
    public GroupSnapshotMeta createGroupSnapshot(String requestName, List<String> sourceVolumeIds) {
        return groupSnapshots.create(requestName, sourceVolumeIds);
    }

    @Override
    public void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
        groupSnapshots.delete(groupSnapshotId, snapshotIds);
    }

    @Override
    public Optional<GroupSnapshotMeta> groupSnapshot(String groupSnapshotId) {
        return groupSnapshots.get(groupSnapshotId);
    }

    // ---- capacity ---------------------------------------------------------------------------

    @Override
    public PoolCapacity capacity() {
        long total = 0;
        long allocated = 0;
        long free = 0;
        long available = 0;
        long availableThick = 0;
        long charged = 0;
        long reserve = 0;
        for (LoopPoolNode n : nodeMap().values()) {
            if (NodeChooser.fresh(n, clock.instant(), staleAfter)) {
                PoolCapacity c = reported(n.getStatus());
                total += c.totalBytes();
                allocated += c.allocatedBytes();
                free += c.hostFreeBytes();
                available += c.availableBytes();
                availableThick += c.availableThickBytes();
                charged += c.chargedBytes();
                reserve += c.hostReserveBytes();
            }
        }
        return new PoolCapacity(total, allocated, free, 0, available, availableThick, charged, reserve, 1, "");
    }

    /** A node's capacity as it last published it; none for a node whose heartbeat is stale (it cannot take volumes). */
    @Override
    public PoolCapacity capacity(String node) {
        if (node == null) {
            return capacity();
        }
        LoopPoolNode n = nodeMap().get(node);
        if (!NodeChooser.fresh(n, clock.instant(), staleAfter)) {
            return PoolCapacity.NONE;
        }
        return reported(n.getStatus());
    }

    /** A node's report as a PoolCapacity; a node older than the thick figure (issue 24) has one figure for both. */
    static PoolCapacity reported(io.loopcsi.handoff.LoopPoolNodeStatus s) {
        long available = s.getAvailableBytes() == null ? 0 : s.getAvailableBytes();
        long allocated = s.getAllocatedBytes() == null ? 0 : s.getAllocatedBytes();
        return new PoolCapacity(s.getTotalBytes() == null ? 0 : s.getTotalBytes(), allocated,
                s.getHostFreeBytes() == null ? 0 : s.getHostFreeBytes(), 0, available, s.available(true),
                s.getChargedBytes() == null ? allocated : s.getChargedBytes(), s.getHostReserveBytes() == null ? 0 : s.getHostReserveBytes(),
                s.getThinOvercommit() == null ? 1 : s.getThinOvercommit(), s.getCapacityProblem());
    }

    @Override
    public long largestVolumeBytes(String node, boolean thick) {
        if (node != null) {
            return capacity(node).available(thick);
        }
        long largest = 0;
        for (LoopPoolNode n : nodeMap().values()) {
            if (NodeChooser.fresh(n, clock.instant(), staleAfter)) {
                largest = Math.max(largest, n.getStatus().available(thick));
            }
        }
        return largest;
    }

    /** The nodes that published a LoopPoolNode of this pool (fresh or not). */
    java.util.Set<String> nodesKnown() {
        return nodeMap().keySet();
    }

    private Map<String, LoopPoolNode> nodeMap() {
        Map<String, LoopPoolNode> m = new HashMap<>();
        for (LoopPoolNode n : nodes.getStore().list()) {
            if (n.getSpec() != null && n.getSpec().getNode() != null) {
                m.put(n.getSpec().getNode(), n);
            }
        }
        return m;
    }

    // ---- waiting ----------------------------------------------------------------------------

    /**
     * Waits until the object (read from the informer, else the API server) satisfies done. Fails
     * fast with UNAVAILABLE when its node's heartbeat is stale, with DEADLINE_EXCEEDED after the
     * answer timeout; ABORTED when the object disappears meanwhile.
     */
    <T extends CustomResource<?, ?>> T await(Class<T> type, String name, String node, Predicate<T> done, String what) {
        Instant deadline = clock.instant().plus(answerTimeout);
        while (true) {
            T current = cached(type, name);
            if (current == null) {
                current = get(type, name);
            }
            if (current == null) {
                throw Status.ABORTED.withDescription(what + " was deleted while waiting for node " + node).asRuntimeException();
            }
            if (done.test(current)) {
                return current;
            }
            T fromServer = get(type, name); // the informer may lag behind our own write
            if (fromServer != null && done.test(fromServer)) {
                return fromServer;
            }
            checkNodeAlive(node, what);
            if (!clock.instant().isBefore(deadline)) {
                throw Status.DEADLINE_EXCEEDED.withDescription("node " + node + " has not answered for " + what + " in "
                        + answerTimeout.toSeconds() + "s; the request stays recorded, call again").asRuntimeException();
            }
            pause(deadline);
        }
    }

    /** What a node last answered, from either kind of status. */
    private record Answer(String phase, String code, String message, Long observedGeneration) {

        static Answer of(CustomResource<?, ?> r) {
            if (r.getStatus() instanceof io.loopcsi.handoff.LoopVolumeStatus v) {
                return new Answer(v.getPhase(), v.getCode(), v.getMessage(), v.getObservedGeneration());
            }
            if (r.getStatus() instanceof io.loopcsi.handoff.LoopSnapshotStatus s) {
                return new Answer(s.getPhase(), s.getCode(), s.getMessage(), s.getObservedGeneration());
            }
            if (r.getStatus() instanceof LoopGroupSnapshotStatus g) {
                return new Answer(g.getPhase(), g.getCode(), g.getMessage(), g.getObservedGeneration());
            }
            return new Answer(null, null, null, null);
        }
    }

    /**
     * Deletes the object and waits until the node has deleted the files and released it. A
     * refusal the node gave before this call (it keeps retrying by itself) is not taken as the
     * answer: the call raises spec.attempt so the node tries again now, and waits for that try.
     */
    <T extends CustomResource<?, ?>> void awaitGone(Class<T> type, String name, String what) {
        T current = get(type, name);
        if (current == null) {
            return;
        }
        if (current.getMetadata().getDeletionTimestamp() == null) {
            client.resources(type).withName(name).delete();
            LOG.infof("deleting %s on node %s", what, nodeOfObject(current));
            current = get(type, name);
            if (current == null) {
                return;
            }
        } else if (Phase.DELETE_FAILED.equals(Answer.of(current).phase())) {
            try {
                current = client.resources(type).withName(name).edit(o -> {
                    if (o instanceof LoopVolume v) {
                        v.getSpec().setAttempt((v.getSpec().getAttempt() == null ? 0 : v.getSpec().getAttempt()) + 1);
                    } else if (o instanceof LoopSnapshot s) {
                        s.getSpec().setAttempt((s.getSpec().getAttempt() == null ? 0 : s.getSpec().getAttempt()) + 1);
                    } else if (o instanceof LoopGroupSnapshot g) {
                        g.getSpec().setAttempt((g.getSpec().getAttempt() == null ? 0 : g.getSpec().getAttempt()) + 1);
                    }
                    return o;
                });
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return;
                }
                throw e;
            }
        }
        long generation = current.getMetadata().getGeneration() == null ? 0 : current.getMetadata().getGeneration();
        Instant deadline = clock.instant().plus(answerTimeout);
        while (true) {
            current = get(type, name);
            if (current == null) {
                return;
            }
            Answer a = Answer.of(current);
            if (Phase.DELETE_FAILED.equals(a.phase()) && a.observedGeneration() != null && a.observedGeneration() >= generation) {
                throw Codes.status(a.code(), "node " + nodeOfObject(current) + ": " + a.message()).asRuntimeException();
            }
            if (nodeIsGone(nodeOfObject(current))) {
                releaseOfGoneNode(type, current, what);
                return;
            }
            checkNodeAlive(nodeOfObject(current), what);
            if (!clock.instant().isBefore(deadline)) {
                throw Status.DEADLINE_EXCEEDED.withDescription("node " + nodeOfObject(current) + " has not deleted " + what + " in "
                        + answerTimeout.toSeconds() + "s; its deletion stays recorded, call again").asRuntimeException();
            }
            pause(deadline);
        }
    }

    private static String nodeOfObject(CustomResource<?, ?> r) {
        if (r instanceof LoopVolume v) {
            return v.getSpec().getNode();
        }
        return r instanceof LoopGroupSnapshot g ? g.getSpec().getNode() : ((LoopSnapshot) r).getSpec().getNode();
    }

    /**
     * A node that is gone: its heartbeat is stale and its Node object was deleted. Its files went with
     * the machine (or will never be served again), so there is nothing left to free; a node that only
     * stopped reporting (its Node object still there) is not gone: it may come back with the files.
     */
    private boolean nodeIsGone(String node) {
        if (NodeChooser.fresh(nodes.getStore().getByKey(HandoffNames.poolNode(pool, node)), clock.instant(), staleAfter)) {
            return false;
        }
        return client.nodes().withName(node).get() == null;
    }

    /** Deletes an object of a gone node by dropping the node's finalizer (no one else would ever drop it). */
    private <T extends CustomResource<?, ?>> void releaseOfGoneNode(Class<T> type, T current, String what) {
        try {
            client.resources(type).withName(current.getMetadata().getName()).edit(o -> {
                List<String> f = o.getMetadata().getFinalizers() == null ? List.of() : o.getMetadata().getFinalizers();
                o.getMetadata().setFinalizers(f.stream().filter(x -> !HandoffNames.FINALIZER.equals(x)).toList());
                return o;
            });
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
        LOG.warnf("%s: node %s is gone (its Node object was deleted; %s): nothing left to free there, %s %s released",
                what, nodeOfObject(current), heartbeatOf(nodeOfObject(current)), type.getSimpleName(), current.getMetadata().getName());
    }

    private String heartbeatOf(String node) {
        LoopPoolNode n = nodes.getStore().getByKey(HandoffNames.poolNode(pool, node));
        return n == null || n.getStatus() == null || n.getStatus().getHeartbeatTime() == null ? "it never reported"
                : "last heartbeat " + n.getStatus().getHeartbeatTime();
    }

    private void checkNodeAlive(String node, String what) {
        LoopPoolNode n = nodes.getStore().getByKey(HandoffNames.poolNode(pool, node));
        if (!NodeChooser.fresh(n, clock.instant(), staleAfter)) {
            String since = n == null || n.getStatus() == null ? "never reported (no LoopPoolNode " + HandoffNames.poolNode(pool, node) + ")"
                    : "last reported at " + n.getStatus().getHeartbeatTime();
            throw Status.UNAVAILABLE.withDescription("node " + node + " is not serving pool " + pool + " (" + since + "): " + what
                    + " waits for it; the request stays recorded, call again").asRuntimeException();
        }
    }

    private void pause(Instant deadline) {
        long left = Duration.between(clock.instant(), deadline).toMillis();
        synchronized (changes) {
            try {
                changes.wait(Math.max(1, Math.min(POLL_MILLIS, left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
            }
        }
    }

    private <T extends CustomResource<?, ?>> T cached(Class<T> type, String name) {
        SharedIndexInformer<?> informer = type == LoopVolume.class ? volumes : type == LoopGroupSnapshot.class ? groups : snapshots;
        return type.cast(informer.getStore().getByKey(name));
    }

    <T extends CustomResource<?, ?>> T get(Class<T> type, String name) {
        return client.resources(type).withName(name).get();
    }

    static long millis(String rfc3339, String fallback) {
        for (String s : new String[] { rfc3339, fallback }) {
            if (s != null) {
                try {
                    return Instant.parse(s).toEpochMilli();
                } catch (RuntimeException ignored) {
                    // try the next
                }
            }
        }
        return 0;
    }
}
