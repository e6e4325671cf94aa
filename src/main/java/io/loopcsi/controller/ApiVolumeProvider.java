package io.loopcsi.controller;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.Condition;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeProvider;

/**
 * The controller role's volume provider: volumes live on the nodes, so every change is written
 * as intent into a hand-off object on the chosen node and the call waits, with a bound, for that
 * node's answer in status. This class only wires the parts, one job each:
 * {@link PoolInformers} (the pool's objects, read and watched), {@link PoolNodes} (which nodes
 * serve, node choice, capacity), {@link NodeAnswers} (waiting for a node's answer, deletion and
 * release of a gone node's objects), {@link VolumeIntents}, {@link SnapshotIntents} and
 * {@link ApiGroupSnapshots} (the intents of each kind of object), {@link TransferIntents} and
 * {@link TransferSweep} (the authorisations of cross-node transfers, and their end).
 */
public class ApiVolumeProvider implements VolumeProvider, AutoCloseable {

    private final KubernetesClient client;
    private final String pool;
    private final String driver;
    private final Duration answerTimeout;
    private final Duration staleAfter;
    private final Clock clock;
    private PoolInformers informers;
    private PoolNodes nodes;
    private VolumeIntents volumes;
    private SnapshotIntents snapshots;
    private ApiGroupSnapshots groups;
    private TransferIntents transfers;
    private TransferSweep sweep;

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
        informers = new PoolInformers(client, pool, clock).start();
        nodes = new PoolNodes(informers, client, staleAfter, clock);
        NodeAnswers answers = new NodeAnswers(informers, nodes, client, answerTimeout, clock);
        transfers = new TransferIntents(informers, nodes, client, answerTimeout, clock);
        groups = new ApiGroupSnapshots(informers, answers, transfers, client, driver);
        volumes = new VolumeIntents(informers, nodes, answers, groups, transfers, client, driver);
        snapshots = new SnapshotIntents(informers, answers, groups, transfers, client, driver);
        return this;
    }

    /** Deletes the pool's transfers that are over every period ({@link TransferSweep}), after {@link #start}; until {@link #close}. */
    public synchronized ApiVolumeProvider sweepTransfers(Duration every) {
        if (transfers == null) {
            throw new IllegalStateException("sweepTransfers before start: it acts only on what the informers have listed");
        }
        if (sweep == null) {
            sweep = new TransferSweep(transfers).start(every);
        }
        return this;
    }

    @Override
    public void close() {
        if (sweep != null) {
            sweep.close();
        }
        if (informers != null) {
            informers.close();
        }
    }

    @Override
    public String nodeId() {
        return "(controller of pool " + pool + ")";
    }

    // ---- volumes (VolumeIntents) ----------------------------------------------------------------

    @Override
    public VolumeMeta createVolume(CreateRequest req) {
        return createVolume(req, Placement.ANYWHERE);
    }

    @Override
    public VolumeMeta createVolume(CreateRequest req, Placement placement) {
        return volumes.createVolume(req, placement);
    }

    @Override
    public void deleteVolume(String volumeId) {
        volumes.deleteVolume(volumeId);
    }

    @Override
    public Optional<VolumeMeta> volume(String volumeId) {
        return volumes.volume(volumeId);
    }

    @Override
    public List<VolumeMeta> volumes() {
        return volumes.volumes();
    }

    @Override
    public String nodeOf(String volumeId) {
        return volumes.nodeOf(volumeId);
    }

    @Override
    public Condition condition(String volumeId) {
        return volumes.condition(volumeId);
    }

    @Override
    public VolumeMeta expandVolume(String volumeId, long requiredBytes, long limitBytes) {
        return volumes.expandVolume(volumeId, requiredBytes, limitBytes);
    }

    @Override
    public boolean modifiable() {
        return true;
    }

    @Override
    public VolumeMeta modifyVolume(String volumeId, MutableParameters changes) {
        return volumes.modifyVolume(volumeId, changes);
    }

    // ---- snapshots (SnapshotIntents) and group snapshots (ApiGroupSnapshots) --------------------

    @Override
    public SnapshotMeta createSnapshot(String requestName, String sourceVolumeId) {
        return snapshots.createSnapshot(requestName, sourceVolumeId);
    }

    @Override
    public void deleteSnapshot(String snapshotId) {
        snapshots.deleteSnapshot(snapshotId);
    }

    @Override
    public Optional<SnapshotMeta> snapshot(String snapshotId) {
        return snapshots.snapshot(snapshotId);
    }

    @Override
    public List<SnapshotMeta> snapshots() {
        return snapshots.snapshots();
    }

    @Override
    public boolean groupSnapshots() {
        return true;
    }

    @Override
    public GroupSnapshotMeta createGroupSnapshot(String requestName, List<String> sourceVolumeIds) {
        return groups.create(requestName, sourceVolumeIds);
    }

    @Override
    public void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
        groups.delete(groupSnapshotId, snapshotIds);
    }

    @Override
    public Optional<GroupSnapshotMeta> groupSnapshot(String groupSnapshotId) {
        return groups.get(groupSnapshotId);
    }

    // ---- capacity (PoolNodes) -------------------------------------------------------------------

    @Override
    public PoolCapacity capacity() {
        return nodes.capacity();
    }

    /** A node's capacity as it last published it; none for a node whose heartbeat is stale (it cannot take volumes). */
    @Override
    public PoolCapacity capacity(String node) {
        return node == null ? nodes.capacity() : nodes.capacity(node);
    }

    @Override
    public long largestVolumeBytes(String node, boolean thick) {
        return node != null ? capacity(node).available(thick) : nodes.largestVolumeBytes(thick);
    }
}
