package io.loopcsi.node;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotSpec;
import io.loopcsi.handoff.LoopSnapshotStatus;
import io.loopcsi.handoff.Phase;

/** Carries out one LoopSnapshot of this node: the same rules as {@link VolumeHandler}. */
final class SnapshotHandler {

    private static final Logger LOG = Logger.getLogger(SnapshotHandler.class);

    private final KubernetesClient client;
    private final String pool;
    private final VolumeProvider engine;
    private final Function<String, LoopSnapshot> cache;
    private final Runnable changed;
    private final Duration retry;
    /**
     * The generation of each object this node last answered. The informer's copy can lag behind
     * the node's own writes; without this a stale copy would have the engine called again (in
     * vain, and holding the volume's lock while kubelet may be staging it).
     */
    private final Map<String, Long> answeredGeneration = new ConcurrentHashMap<>();

    SnapshotHandler(KubernetesClient client, String pool, VolumeProvider engine, Function<String, LoopSnapshot> cache, Runnable changed,
            Duration retry) {
        this.client = client;
        this.pool = pool;
        this.engine = engine;
        this.cache = cache;
        this.changed = changed;
        this.retry = retry;
    }

    Optional<Duration> handle(String name) {
        LoopSnapshot ls = cache.apply(name);
        if (ls == null) {
            answeredGeneration.remove(name);
            return Optional.empty();
        }
        LoopSnapshotSpec spec = ls.getSpec();
        String id = HandoffNames.idOf(pool, name);
        if (spec == null || id == null || !Ids.isSnapshotId(id) || spec.getName() == null || !id.equals(Ids.snapshotIdFor(spec.getName()))) {
            if (ls.getMetadata().getDeletionTimestamp() != null) {
                ObjectWrites.removeFinalizer(client, LoopSnapshot.class, ls);
            } else if (!ls.answered()) {
                write(ls, status(ls, Phase.FAILED, "INVALID_ARGUMENT", "object name " + name + " is not " + pool
                        + ".<the snapshot ID of spec.name>"));
            }
            return Optional.empty();
        }
        if (ls.getMetadata().getDeletionTimestamp() != null) {
            if (!ObjectWrites.hasFinalizer(ls)) {
                return Optional.empty();
            }
            try {
                engine.deleteSnapshot(id);
            } catch (EngineException e) {
                LOG.infof("snapshot %s: delete refused (%s): %s", id, e.kind(), e.getMessage());
                write(ls, status(ls, Phase.DELETE_FAILED, Codes.of(e.kind()), e.getMessage()));
                return Optional.of(retry);
            }
            ObjectWrites.removeFinalizer(client, LoopSnapshot.class, ls);
            changed.run();
            return Optional.empty();
        }
        Optional<SnapshotMeta> onDisk = engine.snapshot(id);
        if (ls.created() && onDisk.isEmpty()) {
            if (!Phase.MISSING.equals(ls.getStatus().getPhase())) {
                LOG.warnf("snapshot %s (%s) was made on this node but its image is gone from the pool directory", id, name);
                LoopSnapshotStatus s = status(ls, Phase.MISSING, "NOT_FOUND", "the image of snapshot " + id
                        + " is gone from the pool directory on node " + engine.nodeId());
                s.setReadyToUse(false);
                write(ls, s);
                changed.run();
            }
            return Optional.empty();
        }
        if (ls.answered() || answeredGeneration.getOrDefault(name, 0L) >= ls.getMetadata().getGeneration()) {
            return Optional.empty();
        }
        if (!ObjectWrites.addFinalizer(client, LoopSnapshot.class, ls)) {
            return Optional.empty();
        }
        try {
            SnapshotMeta m = engine.createSnapshot(spec.getName(), spec.getSourceVolumeId());
            LoopSnapshotStatus s = status(ls, Phase.READY, Codes.OK, "snapshot " + id + " is on node " + engine.nodeId());
            s.setReadyToUse(true);
            s.setSizeBytes(m.sizeBytes());
            s.setSize(Sizes.format(m.sizeBytes()));
            s.setCreationTime(Instant.ofEpochMilli(m.createdAtMillis()).toString());
            write(ls, s);
        } catch (EngineException e) {
            if (e.kind() == EngineException.Kind.ABORTED) {
                return Optional.of(Duration.ofSeconds(1));
            }
            LOG.infof("snapshot %s: %s %s", id, e.kind(), e.getMessage());
            write(ls, status(ls, Phase.FAILED, Codes.of(e.kind()), e.getMessage()));
            if (engine.snapshot(id).isEmpty()) {
                ObjectWrites.removeFinalizer(client, LoopSnapshot.class, ls);
            }
        }
        answeredGeneration.put(name, ls.getMetadata().getGeneration());
        changed.run();
        return Optional.empty();
    }

    /** A status based on the current one (size and time kept), answering the current generation. */
    private static LoopSnapshotStatus status(LoopSnapshot ls, String phase, String code, String message) {
        LoopSnapshotStatus s = new LoopSnapshotStatus();
        LoopSnapshotStatus old = ls.getStatus();
        if (old != null) {
            s.setSizeBytes(old.getSizeBytes());
            s.setSize(old.getSize());
            s.setCreationTime(old.getCreationTime());
            s.setReadyToUse(old.getReadyToUse());
        }
        s.setPhase(phase);
        s.setCode(code);
        s.setMessage(message);
        s.setObservedGeneration(ls.getMetadata().getGeneration());
        return s;
    }

    private void write(LoopSnapshot ls, LoopSnapshotStatus s) {
        ObjectWrites.status(client, LoopSnapshot.class, ls, s);
    }
}
