package io.loopcsi.node;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.SectorSizes;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotSpec;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.Phase;

/**
 * Carries out one LoopGroupSnapshot of this node with the engine's group snapshot (every mounted
 * member frozen together, copied, thawed whatever happens): the protocol of
 * {@link HandoffHandler}. Deleting the object deletes the members and the group record.
 */
final class GroupSnapshotHandler extends HandoffHandler<LoopGroupSnapshot, LoopGroupSnapshotStatus, GroupSnapshotMeta> {

    GroupSnapshotHandler(KubernetesClient client, String pool, VolumeProvider engine, Function<String, LoopGroupSnapshot> cache,
            Runnable changed, Duration retry) {
        super(client, LoopGroupSnapshot.class, pool, engine, cache, changed, retry, "group snapshot", "record",
                "<the group snapshot ID of spec.name>, or spec.sourceVolumeIds is empty");
    }

    @Override
    protected boolean valid(LoopGroupSnapshot g, String id) {
        LoopGroupSnapshotSpec spec = g.getSpec();
        return spec != null && Ids.isGroupSnapshotId(id) && spec.getName() != null && id.equals(Ids.groupSnapshotIdFor(spec.getName()))
                && spec.getSourceVolumeIds() != null && !spec.getSourceVolumeIds().isEmpty();
    }

    @Override
    protected Optional<GroupSnapshotMeta> onDisk(String id) {
        return engine.groupSnapshot(id);
    }

    @Override
    protected void deleteFiles(String id) {
        Optional<GroupSnapshotMeta> onDisk = engine.groupSnapshot(id);
        if (onDisk.isPresent()) {
            engine.deleteGroupSnapshot(id, onDisk.get().snapshotIds());
        }
    }

    @Override
    protected LoopGroupSnapshotStatus carryOut(LoopGroupSnapshot g, String id, Optional<GroupSnapshotMeta> onDisk) {
        GroupSnapshotMeta m = engine.createGroupSnapshot(g.getSpec().getName(), g.getSpec().getSourceVolumeIds());
        return ready(g, m, members(m), engine.nodeId());
    }

    @Override
    protected LoopGroupSnapshotStatus missing(LoopGroupSnapshot g, String id) {
        LoopGroupSnapshotStatus s = status(g, Phase.MISSING, "NOT_FOUND", "the record of group snapshot " + id
                + " is gone from the pool directory on node " + engine.nodeId());
        s.setReadyToUse(false);
        return s;
    }

    @Override
    protected LoopGroupSnapshotStatus statusOf(LoopGroupSnapshot g, String phase, String code, String message) {
        return status(g, phase, code, message);
    }

    /**
     * Each member's snapshot as the engine recorded it (empty for a member gone meanwhile): its size,
     * and its sector size, which a restore on another node must keep (issue 35) and can only learn
     * from this status, as a single snapshot's is published in its LoopSnapshot's.
     */
    private List<Optional<SnapshotMeta>> members(GroupSnapshotMeta m) {
        List<Optional<SnapshotMeta>> metas = new ArrayList<>();
        for (String s : m.snapshotIds()) {
            metas.add(engine.snapshot(s));
        }
        return metas;
    }

    /**
     * The answer to a group made: its members (in the order of the sorted source volumes, each with
     * its size and sector size from {@code metas}, in the same order) and the instant it was cut.
     */
    static LoopGroupSnapshotStatus ready(LoopGroupSnapshot g, GroupSnapshotMeta m, List<Optional<SnapshotMeta>> metas, String node) {
        LoopGroupSnapshotStatus s = status(g, Phase.READY, Codes.OK, "group snapshot " + m.id() + " of " + m.sourceVolumeIds().size()
                + " volumes is on node " + node);
        List<LoopGroupSnapshotStatus.Member> members = new ArrayList<>();
        for (int i = 0; i < m.snapshotIds().size(); i++) {
            Optional<SnapshotMeta> meta = metas.get(i);
            Integer sectors = meta.map(SnapshotMeta::logicalBlockSize).filter(SectorSizes::valid).orElse(null);
            members.add(new LoopGroupSnapshotStatus.Member(m.snapshotIds().get(i), m.sourceVolumeIds().get(i),
                    meta.map(SnapshotMeta::sizeBytes).orElse(0L), sectors));
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
}
