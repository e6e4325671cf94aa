package io.loopcsi.node;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotSpec;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.Phase;

/**
 * Carries out one LoopGroupSnapshot of this node with the engine's group snapshot (every mounted
 * member frozen together, copied, thawed whatever happens): the same rules as
 * {@link SnapshotHandler}. Deleting the object deletes the members and the group record.
 */
final class GroupSnapshotHandler {

    private static final Logger LOG = Logger.getLogger(GroupSnapshotHandler.class);

    private final KubernetesClient client;
    private final String pool;
    private final VolumeProvider engine;
    private final Function<String, LoopGroupSnapshot> cache;
    private final Runnable changed;
    private final Duration retry;
    /** The generation of each object this node last answered (the informer's copy can lag behind the node's own writes). */
    private final Map<String, Long> answeredGeneration = new ConcurrentHashMap<>();

    GroupSnapshotHandler(KubernetesClient client, String pool, VolumeProvider engine, Function<String, LoopGroupSnapshot> cache,
            Runnable changed, Duration retry) {
        this.client = client;
        this.pool = pool;
        this.engine = engine;
        this.cache = cache;
        this.changed = changed;
        this.retry = retry;
    }

    Optional<Duration> handle(String name) {
        LoopGroupSnapshot g = cache.apply(name);
        if (g == null) {
            answeredGeneration.remove(name);
            return Optional.empty();
        }
        LoopGroupSnapshotSpec spec = g.getSpec();
        String id = HandoffNames.idOf(pool, name);
        if (spec == null || id == null || !Ids.isGroupSnapshotId(id) || spec.getName() == null
                || !id.equals(Ids.groupSnapshotIdFor(spec.getName())) || spec.getSourceVolumeIds() == null
                || spec.getSourceVolumeIds().isEmpty()) {
            if (g.getMetadata().getDeletionTimestamp() != null) {
                ObjectWrites.removeFinalizer(client, LoopGroupSnapshot.class, g);
            } else if (!g.answered()) {
                write(g, status(g, Phase.FAILED, "INVALID_ARGUMENT", "object name " + name + " is not " + pool
                        + ".<the group snapshot ID of spec.name>, or spec.sourceVolumeIds is empty"));
            }
            return Optional.empty();
        }
        if (g.getMetadata().getDeletionTimestamp() != null) {
            return delete(g, id);
        }
        Optional<GroupSnapshotMeta> onDisk = engine.groupSnapshot(id);
        if (g.created() && onDisk.isEmpty()) {
            if (!Phase.MISSING.equals(g.getStatus().getPhase())) {
                LOG.warnf("group snapshot %s (%s) was made on this node but its record is gone from the pool directory", id, name);
                LoopGroupSnapshotStatus s = status(g, Phase.MISSING, "NOT_FOUND", "the record of group snapshot " + id
                        + " is gone from the pool directory on node " + engine.nodeId());
                s.setReadyToUse(false);
                write(g, s);
                changed.run();
            }
            return Optional.empty();
        }
        if (g.answered() || answeredGeneration.getOrDefault(name, 0L) >= g.getMetadata().getGeneration()) {
            return Optional.empty();
        }
        if (!ObjectWrites.addFinalizer(client, LoopGroupSnapshot.class, g)) {
            return Optional.empty();
        }
        try {
            GroupSnapshotMeta m = engine.createGroupSnapshot(spec.getName(), spec.getSourceVolumeIds());
            write(g, ready(g, m, memberSizes(m), engine.nodeId()));
        } catch (EngineException e) {
            if (e.kind() == EngineException.Kind.ABORTED) {
                return Optional.of(Duration.ofSeconds(1)); // a member volume is busy (e.g. being staged)
            }
            LOG.infof("group snapshot %s: %s %s", id, e.kind(), e.getMessage());
            write(g, status(g, Phase.FAILED, Codes.of(e.kind()), e.getMessage()));
            if (engine.groupSnapshot(id).isEmpty()) {
                ObjectWrites.removeFinalizer(client, LoopGroupSnapshot.class, g);
            }
        }
        answeredGeneration.put(name, g.getMetadata().getGeneration());
        changed.run();
        return Optional.empty();
    }

    private Optional<Duration> delete(LoopGroupSnapshot g, String id) {
        if (!ObjectWrites.hasFinalizer(g)) {
            return Optional.empty();
        }
        try {
            Optional<GroupSnapshotMeta> onDisk = engine.groupSnapshot(id);
            if (onDisk.isPresent()) {
                engine.deleteGroupSnapshot(id, onDisk.get().snapshotIds());
            }
        } catch (EngineException e) {
            LOG.infof("group snapshot %s: delete refused (%s): %s", id, e.kind(), e.getMessage());
            write(g, status(g, Phase.DELETE_FAILED, Codes.of(e.kind()), e.getMessage()));
            return Optional.of(retry);
        }
        ObjectWrites.removeFinalizer(client, LoopGroupSnapshot.class, g);
        changed.run();
        return Optional.empty();
    }

    /** Each member's size as the engine recorded it (0 for a member gone meanwhile). */
    private List<Long> memberSizes(GroupSnapshotMeta m) {
        List<Long> sizes = new ArrayList<>();
        for (String s : m.snapshotIds()) {
            sizes.add(engine.snapshot(s).map(SnapshotMeta::sizeBytes).orElse(0L));
        }
        return sizes;
    }

    /** The answer to a group made: its members (in the order of the sorted source volumes) and the instant it was cut. */
    static LoopGroupSnapshotStatus ready(LoopGroupSnapshot g, GroupSnapshotMeta m, List<Long> sizes, String node) {
        LoopGroupSnapshotStatus s = status(g, Phase.READY, Codes.OK, "group snapshot " + m.id() + " of " + m.sourceVolumeIds().size()
                + " volumes is on node " + node);
        List<LoopGroupSnapshotStatus.Member> members = new ArrayList<>();
        for (int i = 0; i < m.snapshotIds().size(); i++) {
            members.add(new LoopGroupSnapshotStatus.Member(m.snapshotIds().get(i), m.sourceVolumeIds().get(i), sizes.get(i)));
        }
        s.setMembers(members);
        s.setReadyToUse(true);
        s.setCreationTime(Instant.ofEpochMilli(m.createdAtMillis()).toString());
        return s;
    }

    /** A status based on the current one (members and time kept), answering the current generation. */
    static LoopGroupSnapshotStatus status(LoopGroupSnapshot g, String phase, String code, String message) {
        LoopGroupSnapshotStatus s = new LoopGroupSnapshotStatus();
        LoopGroupSnapshotStatus old = g.getStatus();
        if (old != null) {
            s.setMembers(old.getMembers());
            s.setCreationTime(old.getCreationTime());
            s.setReadyToUse(old.getReadyToUse());
        }
        s.setPhase(phase);
        s.setCode(code);
        s.setMessage(message);
        s.setObservedGeneration(g.getMetadata().getGeneration());
        return s;
    }

    private void write(LoopGroupSnapshot g, LoopGroupSnapshotStatus s) {
        ObjectWrites.status(client, LoopGroupSnapshot.class, g, s);
    }
}
