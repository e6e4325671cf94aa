package io.loopcsi.controller;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotSpec;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.Phase;

/**
 * Snapshots as intents: a LoopSnapshot ({@code <pool>.<snapshot ID>}) on the node of its source
 * volume, answered by that node ({@link NodeAnswers}). The pool's snapshots are those of its
 * LoopSnapshots and the members of its group snapshots ({@link ApiGroupSnapshots}).
 */
final class SnapshotIntents {

    private static final Logger LOG = Logger.getLogger(SnapshotIntents.class);

    private final PoolInformers informers;
    private final NodeAnswers answers;
    private final ApiGroupSnapshots groups;
    private final TransferIntents transfers;
    private final KubernetesClient client;
    private final String pool;
    private final String driver;

    SnapshotIntents(PoolInformers informers, NodeAnswers answers, ApiGroupSnapshots groups, TransferIntents transfers, KubernetesClient client,
            String driver) {
        this.transfers = transfers;
        this.informers = informers;
        this.answers = answers;
        this.groups = groups;
        this.client = client;
        this.pool = informers.pool();
        this.driver = driver;
    }

    SnapshotMeta createSnapshot(String requestName, String sourceVolumeId) {
        String id = Ids.snapshotIdFor(requestName);
        Ids.requireVolumeId(sourceVolumeId);
        String name = HandoffNames.object(pool, id);
        for (int round = 0; round < 3; round++) {
            LoopSnapshot existing = informers.get(LoopSnapshot.class, name);
            if (existing == null) {
                LoopVolume src = informers.get(LoopVolume.class, HandoffNames.object(pool, sourceVolumeId));
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
        return answers.await(LoopSnapshot.class, written.getMetadata().getName(), written.getSpec().getNode(),
                ls -> ls.answered() && ls.getMetadata().getGeneration() >= generation, "snapshot " + written.getMetadata().getName());
    }

    private SnapshotMeta snapshotAnswer(LoopSnapshot ls) {
        if (Phase.READY.equals(ls.getStatus().getPhase())) {
            return snapshotMeta(ls);
        }
        throw Codes.status(ls.getStatus().getCode(), "node " + ls.getSpec().getNode() + ": " + ls.getStatus().getMessage()).asRuntimeException();
    }

    private SnapshotMeta snapshotMeta(LoopSnapshot ls) {
        LoopVolume src = informers.cachedVolume(ls.getSpec().getSourceVolumeId());
        return new SnapshotMeta(HandoffNames.idOf(pool, ls.getMetadata().getName()), ls.getSpec().getName(), ls.getSpec().getSourceVolumeId(),
                ls.getStatus().getSizeBytes(), src == null ? null : src.getSpec().getMode(), src == null ? null : src.getSpec().getFsType(),
                ObjectTimes.millis(ls.getStatus().getCreationTime(), ls.getMetadata().getCreationTimestamp()));
    }

    /**
     * A member of a group snapshot goes with its group (DeleteVolumeGroupSnapshot): refused with
     * FAILED_PRECONDITION, as the spec has for a snapshot with dependants.
     */
    void deleteSnapshot(String snapshotId) {
        Ids.requireSnapshotId(snapshotId);
        String name = HandoffNames.object(pool, snapshotId);
        transfers.checkNotHeld(snapshotId, "snapshot " + snapshotId);
        if (informers.get(LoopSnapshot.class, name) == null) {
            Optional<ApiGroupSnapshots.Member> m = groups.member(snapshotId, true);
            if (m.isPresent()) {
                throw EngineException.precondition("snapshot " + snapshotId + " is a member of group snapshot "
                        + HandoffNames.idOf(pool, m.get().group().getMetadata().getName()) + "; delete the group snapshot");
            }
        }
        answers.awaitGone(LoopSnapshot.class, name, "snapshot " + snapshotId);
    }

    Optional<SnapshotMeta> snapshot(String snapshotId) {
        if (!Ids.isSnapshotId(snapshotId)) {
            return Optional.empty();
        }
        LoopSnapshot s = informers.get(LoopSnapshot.class, HandoffNames.object(pool, snapshotId));
        if (s != null && s.created()) {
            return Optional.of(snapshotMeta(s));
        }
        return groups.member(snapshotId, true).map(groups::memberMeta);
    }

    /** The pool's snapshots: those of LoopSnapshots and the members of its group snapshots. */
    List<SnapshotMeta> snapshots() {
        List<SnapshotMeta> all = new java.util.ArrayList<>();
        informers.snapshots().stream().filter(LoopSnapshot::created).map(this::snapshotMeta).forEach(all::add);
        all.addAll(groups.members());
        all.sort(Comparator.comparing(SnapshotMeta::id));
        return all;
    }
}
