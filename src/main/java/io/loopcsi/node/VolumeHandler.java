package io.loopcsi.node;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeSpec;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;

/**
 * Carries out one LoopVolume of this node with the local engine and answers in its status.
 * The files decide: a volume the node made whose file is gone is reported Missing, never made
 * again empty; a spec the node already answered is not carried out again (a retry raises
 * spec.attempt). Deletion deletes the files, then releases the node's finalizer.
 */
final class VolumeHandler {

    private static final Logger LOG = Logger.getLogger(VolumeHandler.class);

    private final KubernetesClient client;
    private final String pool;
    private final VolumeProvider engine;
    private final Function<String, LoopVolume> cache;
    private final Runnable changed;
    private final Duration retry;
    /**
     * The generation of each object this node last answered. The informer's copy can lag behind
     * the node's own writes; without this a stale copy would have the engine called again (in
     * vain, and holding the volume's lock while kubelet may be staging it).
     */
    private final Map<String, Long> answeredGeneration = new ConcurrentHashMap<>();

    VolumeHandler(KubernetesClient client, String pool, VolumeProvider engine, Function<String, LoopVolume> cache, Runnable changed,
            Duration retry) {
        this.client = client;
        this.pool = pool;
        this.engine = engine;
        this.cache = cache;
        this.changed = changed;
        this.retry = retry;
    }

    /** Returns when to look again, if ever. */
    Optional<Duration> handle(String name) {
        LoopVolume lv = cache.apply(name);
        if (lv == null) {
            answeredGeneration.remove(name);
            return Optional.empty();
        }
        LoopVolumeSpec spec = lv.getSpec();
        String id = HandoffNames.idOf(pool, name);
        if (spec == null || id == null || !Ids.isVolumeId(id) || spec.getName() == null || !id.equals(Ids.volumeIdFor(spec.getName()))) {
            if (lv.getMetadata().getDeletionTimestamp() != null) {
                ObjectWrites.removeFinalizer(client, LoopVolume.class, lv);
            } else if (!lv.answered()) {
                write(lv, failed(lv, "INVALID_ARGUMENT", "object name " + name + " is not " + pool + ".<the volume ID of spec.name>"));
            }
            return Optional.empty();
        }
        if (lv.getMetadata().getDeletionTimestamp() != null) {
            return delete(lv, id);
        }
        Optional<VolumeMeta> onDisk = engine.volume(id);
        if (lv.created() && onDisk.isEmpty()) {
            if (!Phase.MISSING.equals(lv.getStatus().getPhase())) {
                LOG.warnf("volume %s (%s) was made on this node but its backing file is gone from the pool directory", id, name);
                LoopVolumeStatus s = copy(lv.getStatus());
                s.setPhase(Phase.MISSING);
                s.setReady(false);
                s.setCode("NOT_FOUND");
                s.setMessage("the backing file of " + id + " is gone from the pool directory on node " + engine.nodeId()
                        + "; its data is lost (delete the volume)");
                write(lv, s);
                changed.run();
            }
            return Optional.empty();
        }
        if (lv.answered() || answeredGeneration.getOrDefault(name, 0L) >= lv.getMetadata().getGeneration()) {
            return Optional.empty();
        }
        if (!ObjectWrites.addFinalizer(client, LoopVolume.class, lv)) {
            return Optional.empty(); // deleted meanwhile: its deletion event comes next
        }
        try {
            VolumeMeta m = carryOut(id, spec, onDisk);
            write(lv, ready(m, engine.nodeId(), lv.getMetadata().getGeneration()));
        } catch (EngineException e) {
            if (e.kind() == EngineException.Kind.ABORTED) {
                return Optional.of(Duration.ofSeconds(1)); // another operation on the volume is in flight
            }
            LOG.infof("volume %s: %s %s", id, e.kind(), e.getMessage());
            LoopVolumeStatus s = failed(lv, Codes.of(e.kind()), e.getMessage());
            engine.volume(id).ifPresent(now -> { // e.g. grown, then a modify refused: status says what the disk has
                s.setCapacityBytes(now.capacityBytes());
                s.setCapacity(Sizes.format(now.capacityBytes()));
                s.setMutableParameters(new java.util.TreeMap<>(now.mutableParameters()));
            });
            write(lv, s);
            if (engine.volume(id).isEmpty()) {
                ObjectWrites.removeFinalizer(client, LoopVolume.class, lv); // nothing on disk to protect
            }
        }
        answeredGeneration.put(name, lv.getMetadata().getGeneration());
        changed.run();
        return Optional.empty();
    }

    /**
     * The spec on this node's disk: a volume not there yet is created (with its mutable
     * parameters); one that is there grows to spec.requiredBytes and takes spec.mutableParameters
     * (each only when it differs: both engine calls are idempotent, but take the volume's lock).
     */
    private VolumeMeta carryOut(String id, LoopVolumeSpec spec, Optional<VolumeMeta> onDisk) {
        long required = spec.getRequiredBytes() == null ? 0 : spec.getRequiredBytes();
        long limit = spec.getLimitBytes() == null ? 0 : spec.getLimitBytes();
        MutableParameters wanted = wanted(spec);
        if (onDisk.isEmpty()) {
            return engine.createVolume(new CreateRequest(spec.getName(), required, limit, spec.getMode(),
                    spec.getFsType() == null ? "" : spec.getFsType(), spec.getSourceSnapshotId(), spec.getSourceVolumeId(),
                    spec.getParameters(), wanted));
        }
        VolumeMeta m = onDisk.get();
        boolean grow = required > m.capacityBytes();
        boolean modify = needsModify(m, wanted);
        if (grow) {
            m = engine.expandVolume(id, required, limit);
        }
        if (modify) {
            m = engine.modifyVolume(id, wanted);
        }
        if (!grow && !modify) {
            // a retried spec (raised attempt): the engine's rule for an existing volume answers (same, or ALREADY_EXISTS)
            m = engine.createVolume(new CreateRequest(spec.getName(), required, limit, spec.getMode(),
                    spec.getFsType() == null ? "" : spec.getFsType(), spec.getSourceSnapshotId(), spec.getSourceVolumeId(),
                    spec.getParameters(), wanted));
        }
        return m;
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
        return s;
    }

    private Optional<Duration> delete(LoopVolume lv, String id) {
        if (!ObjectWrites.hasFinalizer(lv)) {
            return Optional.empty();
        }
        try {
            engine.deleteVolume(id);
        } catch (EngineException e) {
            LoopVolumeStatus s = copy(lv.getStatus());
            s.setPhase(Phase.DELETE_FAILED);
            s.setCode(Codes.of(e.kind()));
            s.setMessage(e.getMessage());
            s.setObservedGeneration(lv.getMetadata().getGeneration());
            LoopVolumeStatus old = lv.getStatus();
            if (old == null || !Phase.DELETE_FAILED.equals(old.getPhase()) || !Objects.equals(old.getMessage(), s.getMessage())
                    || !Objects.equals(old.getObservedGeneration(), s.getObservedGeneration())) {
                LOG.infof("volume %s: delete refused (%s): %s; trying again every %s", id, e.kind(), e.getMessage(), retry);
                write(lv, s); // only when it says something new: a retry every few seconds writes nothing
            }
            return Optional.of(retry);
        }
        ObjectWrites.removeFinalizer(client, LoopVolume.class, lv);
        changed.run();
        return Optional.empty();
    }

    private static LoopVolumeStatus failed(LoopVolume lv, String code, String message) {
        LoopVolumeStatus s = copy(lv.getStatus());
        s.setPhase(Phase.FAILED);
        s.setReady(lv.created());
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
        }
        return s;
    }

    private void write(LoopVolume lv, LoopVolumeStatus s) {
        ObjectWrites.status(client, LoopVolume.class, lv, s);
    }
}
