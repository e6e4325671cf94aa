package io.loopcsi.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotSpec;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.Phase;

/**
 * The controller role's group snapshots: a LoopGroupSnapshot ({@code <pool>.<group ID>}) on the
 * one node holding every source volume ({@link GroupPlacement}), answered by that node, waited for
 * with {@link NodeAnswers}' bounds and error mapping. The members are ordinary snapshots
 * on that node, known to the controller only through the group's status.
 */
final class ApiGroupSnapshots {

    private static final Logger LOG = Logger.getLogger(ApiGroupSnapshots.class);

    private final PoolInformers informers;
    private final NodeAnswers answers;
    private final TransferIntents transfers;
    private final KubernetesClient client;
    private final String pool;
    private final String driver;

    ApiGroupSnapshots(PoolInformers informers, NodeAnswers answers, TransferIntents transfers, KubernetesClient client, String driver) {
        this.transfers = transfers;
        this.informers = informers;
        this.answers = answers;
        this.client = client;
        this.pool = informers.pool();
        this.driver = driver;
    }

    /** A member snapshot and its group. */
    record Member(LoopGroupSnapshot group, LoopGroupSnapshotStatus.Member member) {
    }

    /** The group snapshot a snapshot ID is a member of (from the informer, else, when asked, from the API server). */
    Optional<Member> member(String snapshotId, boolean askServer) {
        Optional<Member> m = findMember(informers.groups(), snapshotId);
        if (m.isEmpty() && askServer) {
            m = findMember(client.resources(LoopGroupSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool).list().getItems(), snapshotId);
        }
        return m;
    }

    private static Optional<Member> findMember(List<LoopGroupSnapshot> gs, String snapshotId) {
        for (LoopGroupSnapshot g : gs) {
            if (g.created()) {
                for (LoopGroupSnapshotStatus.Member m : g.getStatus().getMembers()) {
                    if (snapshotId.equals(m.getSnapshotId())) {
                        return Optional.of(new Member(g, m));
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** The members of every group snapshot made, as snapshots of the pool. */
    List<SnapshotMeta> members() {
        List<SnapshotMeta> all = new ArrayList<>();
        for (LoopGroupSnapshot g : informers.groups()) {
            if (g.created()) {
                g.getStatus().getMembers().forEach(m -> all.add(memberMeta(new Member(g, m))));
            }
        }
        return all;
    }

    SnapshotMeta memberMeta(Member m) {
        LoopGroupSnapshot g = m.group();
        LoopVolume src = informers.cachedVolume(m.member().getSourceVolumeId());
        return new SnapshotMeta(m.member().getSnapshotId(), g.getSpec().getName() + "/" + m.member().getSourceVolumeId(),
                m.member().getSourceVolumeId(), m.member().getSizeBytes() == null ? 0 : m.member().getSizeBytes(),
                src == null ? null : src.getSpec().getMode(), src == null ? null : src.getSpec().getFsType(),
                ObjectTimes.millis(g.getStatus().getCreationTime(), g.getMetadata().getCreationTimestamp()),
                HandoffNames.idOf(pool, g.getMetadata().getName()));
    }

    /**
     * Writes a LoopGroupSnapshot on the node holding every source volume and waits for its answer
     * (as for a snapshot). Idempotent by name: the same sources find the same object; other
     * sources under the name are ALREADY_EXISTS. Sources on several nodes: FAILED_PRECONDITION,
     * nothing written ({@link GroupPlacement}).
     */
    GroupSnapshotMeta create(String requestName, List<String> sourceVolumeIds) {
        String id = Ids.groupSnapshotIdFor(requestName);
        List<String> sources = sourceVolumeIds.stream().distinct().sorted().toList();
        String name = HandoffNames.object(pool, id);
        for (int round = 0; round < 3; round++) {
            LoopGroupSnapshot existing = informers.get(LoopGroupSnapshot.class, name);
            if (existing == null) {
                List<GroupPlacement.Source> placed = new ArrayList<>();
                for (String s : sources) {
                    LoopVolume v = Ids.isVolumeId(s) ? informers.get(LoopVolume.class, HandoffNames.object(pool, s)) : null;
                    placed.add(new GroupPlacement.Source(s, v == null || !v.created() ? null : v.getSpec().getNode(),
                            v != null && v.getMetadata().getDeletionTimestamp() != null));
                }
                String node = GroupPlacement.node(placed);
                LoopGroupSnapshotSpec spec = new LoopGroupSnapshotSpec();
                spec.setPool(pool);
                spec.setDriver(driver);
                spec.setNode(node);
                spec.setName(requestName);
                spec.setSourceVolumeIds(new ArrayList<>(sources));
                LoopGroupSnapshot g = new LoopGroupSnapshot(name, spec);
                g.getMetadata().setLabels(HandoffNames.labels(pool, node));
                try {
                    LoopGroupSnapshot made = client.resource(g).create();
                    LOG.infof("CreateVolumeGroupSnapshot %s: LoopGroupSnapshot %s of %s on node %s", requestName, name, sources, node);
                    return groupAnswer(awaitGroup(made));
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 409) {
                        continue;
                    }
                    throw e;
                }
            }
            if (!sources.equals(existing.getSpec().getSourceVolumeIds())) {
                throw EngineException.alreadyExists("group snapshot " + Ids.quote(requestName) + " already exists as " + id + " of volumes "
                        + existing.getSpec().getSourceVolumeIds() + ", not of " + sources);
            }
            if (existing.getMetadata().getDeletionTimestamp() != null) {
                throw Status.ABORTED.withDescription("group snapshot " + id + " is being deleted; try again").asRuntimeException();
            }
            if (existing.created()) {
                return groupMeta(existing);
            }
            if (!existing.answered()) {
                return groupAnswer(awaitGroup(existing));
            }
            LoopGroupSnapshot edited = client.resources(LoopGroupSnapshot.class).withName(name).edit(o -> {
                o.getSpec().setAttempt((o.getSpec().getAttempt() == null ? 0 : o.getSpec().getAttempt()) + 1);
                return o;
            });
            return groupAnswer(awaitGroup(edited));
        }
        throw Status.ABORTED.withDescription("group snapshot " + id + " keeps changing under concurrent calls; try again").asRuntimeException();
    }

    private LoopGroupSnapshot awaitGroup(LoopGroupSnapshot written) {
        long generation = written.getMetadata().getGeneration() == null ? 1 : written.getMetadata().getGeneration();
        return answers.await(LoopGroupSnapshot.class, written.getMetadata().getName(), written.getSpec().getNode(),
                g -> g.answered() && g.getMetadata().getGeneration() >= generation, "group snapshot " + written.getMetadata().getName());
    }

    private GroupSnapshotMeta groupAnswer(LoopGroupSnapshot g) {
        if (Phase.READY.equals(g.getStatus().getPhase())) {
            return groupMeta(g);
        }
        throw Codes.status(g.getStatus().getCode(), "node " + g.getSpec().getNode() + ": " + g.getStatus().getMessage()).asRuntimeException();
    }

    private GroupSnapshotMeta groupMeta(LoopGroupSnapshot g) {
        List<LoopGroupSnapshotStatus.Member> ms = g.getStatus().getMembers();
        return new GroupSnapshotMeta(HandoffNames.idOf(pool, g.getMetadata().getName()), g.getSpec().getName(),
                ms.stream().map(LoopGroupSnapshotStatus.Member::getSourceVolumeId).toList(),
                ms.stream().map(LoopGroupSnapshotStatus.Member::getSnapshotId).toList(),
                ObjectTimes.millis(g.getStatus().getCreationTime(), g.getMetadata().getCreationTimestamp()));
    }

    /** Deletes the group and, on its node, its member snapshots; snapshot_ids that are not the members are INVALID_ARGUMENT. */
    void delete(String groupSnapshotId, List<String> snapshotIds) {
        if (!Ids.isGroupSnapshotId(groupSnapshotId)) {
            return; // cannot exist
        }
        String name = HandoffNames.object(pool, groupSnapshotId);
        LoopGroupSnapshot g = informers.get(LoopGroupSnapshot.class, name);
        if (g == null) {
            return;
        }
        if (g.created() && !snapshotIds.isEmpty()) {
            List<String> members = g.getStatus().getMembers().stream().map(LoopGroupSnapshotStatus.Member::getSnapshotId).toList();
            if (!new TreeSet<>(snapshotIds).equals(new TreeSet<>(members))) {
                throw EngineException.invalid("snapshot_ids " + snapshotIds + " are not the members of group snapshot " + groupSnapshotId
                        + ": " + members);
            }
            for (String m : members) { // a member a transfer reads holds its group (the group's members go together)
                transfers.checkNotHeld(m, "snapshot " + m + " of group snapshot " + groupSnapshotId);
            }
        }
        answers.awaitGone(LoopGroupSnapshot.class, name, "group snapshot " + groupSnapshotId);
    }

    Optional<GroupSnapshotMeta> get(String groupSnapshotId) {
        if (!Ids.isGroupSnapshotId(groupSnapshotId)) {
            return Optional.empty();
        }
        LoopGroupSnapshot g = informers.get(LoopGroupSnapshot.class, HandoffNames.object(pool, groupSnapshotId));
        return g != null && g.created() ? Optional.of(groupMeta(g)) : Optional.empty();
    }
}
