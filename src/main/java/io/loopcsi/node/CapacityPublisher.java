package io.loopcsi.node;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.engine.Condition;
import io.loopcsi.engine.OrphanList;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeSpec;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.operator.api.StoragePool;

/**
 * Writes this node's LoopPoolNode ({@code <pool>.<node>}): capacity, counts, the disk audit and
 * a heartbeat, every heartbeat period and soon after each change; the audit also goes into the pool
 * directory ({@link OrphanList}) for {@code loopcsi doctor}. The object is owned by the
 * StoragePool when it exists, so it goes with the pool.
 */
final class CapacityPublisher implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(CapacityPublisher.class);

    private final KubernetesClient client;
    private final String pool;
    private final String driver;
    private final VolumeProvider engine;
    private final Supplier<Claims> claims;
    private final ScheduledExecutorService timer;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile String lastSummary;
    /** The SHA-256 of the transfer server's certificate, published while it serves (null: it does not). */
    private volatile String transferCertificate;
    private volatile String transferAddress;
    private volatile Instant lastPublished;
    private final Path poolDir;
    /** What the orphan list file holds; a sentinel no audit equals, so the first audit of this process is written. */
    private OrphanList lastOrphans = new OrphanList(null, null, null, List.of("-"), List.of("-"));

    /** What the API holds for this node: IDs named by its objects, and the objects it made. */
    record Claims(Set<String> claimed, List<DiskAudit.Made> made) {
    }

    /** poolDir: where the orphan list is kept (null: nowhere). */
    CapacityPublisher(KubernetesClient client, String pool, String driver, VolumeProvider engine, Supplier<Claims> claims, Path poolDir) {
        this.poolDir = poolDir;
        this.client = client;
        this.pool = pool;
        this.driver = driver;
        this.engine = engine;
        this.claims = claims;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "loopcsi-capacity");
            t.setDaemon(true);
            return t;
        });
    }

    void start(Duration heartbeat) {
        timer.scheduleWithFixedDelay(this::publishQuietly, heartbeat.toMillis(), heartbeat.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One publish in the caller's thread (a failure is logged; the heartbeat tries again). */
    void transferEndpoint(String sha256, String address) {
        this.transferCertificate = sha256;
        this.transferAddress = address;
    }

    void publishNow() {
        publishQuietly();
    }

    /** Publishes soon (changes that come together are written once). */
    void changed() {
        if (scheduled.compareAndSet(false, true)) {
            timer.schedule(() -> {
                scheduled.set(false);
                publishQuietly();
            }, 200, TimeUnit.MILLISECONDS);
        }
    }

    Instant lastPublished() {
        return lastPublished;
    }

    private void publishQuietly() {
        try {
            publish();
        } catch (RuntimeException e) {
            LOG.warnf("cannot publish the capacity of node %s: %s", engine.nodeId(), e.getMessage());
        }
    }

    synchronized void publish() {
        PoolCapacity c = engine.capacity();
        List<VolumeMeta> vols = engine.volumes();
        List<SnapshotMeta> snaps = engine.snapshots();
        Set<String> onDisk = onDisk(vols, snaps);
        Claims cl = claims.get();
        DiskAudit audit = DiskAudit.of(onDisk, partialFetches(), cl.claimed(), cl.made());
        String summary = audit.summary();
        if (!summary.equals(lastSummary)) {
            if (audit.isEmpty()) {
                LOG.infof("pool %s on node %s: %s", pool, engine.nodeId(), summary);
            } else {
                LOG.warnf("pool %s on node %s: %s", pool, engine.nodeId(), summary);
            }
            lastSummary = summary;
        }
        LoopPoolNodeStatus s = new LoopPoolNodeStatus();
        s.setTotalBytes(c.totalBytes());
        s.setAllocatedBytes(c.allocatedBytes());
        s.setHostFreeBytes(c.hostFreeBytes());
        s.setAvailableBytes(c.availableBytes());
        s.setAvailableThickBytes(c.availableThickBytes());
        s.setChargedBytes(c.chargedBytes());
        s.setHostReserveBytes(c.hostReserveBytes());
        s.setThinOvercommit(c.thinOvercommit());
        s.setCapacityProblem(c.problem()); // "" once cleared: a merge patch keeps a field it is not given
        s.setCapacity(Sizes.format(c.totalBytes()));
        s.setAllocated(Sizes.format(c.allocatedBytes()));
        s.setAvailable(Sizes.format(c.availableBytes()));
        s.setVolumes(vols.size());
        s.setSnapshots(snaps.size());
        s.setUnclaimed(audit.listedUnclaimed());
        s.setMissing(audit.listedMissing());
        s.setAbnormalVolumes(abnormal(vols));
        s.setUnclaimedCount(audit.unclaimed().size());
        s.setMissingCount(audit.missing().size());
        s.setAbandonedTransfers(audit.listedAbandoned());
        s.setAbandonedTransferCount(audit.abandoned().size());
        keepOrphanList(audit);
        s.setMessage(summary);
        Instant now = Instant.now();
        s.setHeartbeatTime(now.toString());
        s.setTransferCertificateSha256(transferCertificate);
        s.setTransferAddress(transferAddress);
        LoopPoolNode current = ensureObject();
        ObjectWrites.status(client, LoopPoolNode.class, current, s);
        lastPublished = now;
    }

    /**
     * The volumes whose condition is abnormal here, with why (the controller's GetVolume answers from
     * it): at most {@link DiskAudit#LISTED}, the first by ID. The engine's condition reads no device
     * and runs no command, so this costs nothing per heartbeat.
     */
    private List<LoopPoolNodeStatus.AbnormalVolume> abnormal(List<VolumeMeta> vols) {
        List<LoopPoolNodeStatus.AbnormalVolume> out = new ArrayList<>();
        for (VolumeMeta v : vols) {
            if (out.size() >= DiskAudit.LISTED) {
                break;
            }
            try {
                Condition c = engine.condition(v.id());
                if (c.abnormal()) {
                    out.add(new LoopPoolNodeStatus.AbnormalVolume(v.id(), c.message()));
                }
            } catch (RuntimeException e) {
                // deleted while we looked
            }
        }
        return out;
    }

    /**
     * The IDs whose images are in the pool directory, read from the directory (files removed or copied
     * there behind the driver's back count); without a directory, what the engine lists.
     */
    private Set<String> onDisk(List<VolumeMeta> vols, List<SnapshotMeta> snaps) {
        if (poolDir != null) {
            try {
                return io.loopcsi.engine.PoolDirectory.imagesOnDisk(poolDir);
            } catch (java.io.IOException e) {
                LOG.warnf("cannot list the images in %s (%s): the audit uses the engine's index", poolDir, e.getMessage());
            }
        }
        Set<String> ids = new HashSet<>();
        vols.forEach(v -> ids.add(v.id()));
        snaps.forEach(s -> ids.add(s.id()));
        return ids;
    }

    /** The destination fetches whose progress is in the pool directory (none without a directory). */
    private List<io.loopcsi.engine.PoolDirectory.PartialFetch> partialFetches() {
        if (poolDir != null) {
            try {
                return io.loopcsi.engine.PoolDirectory.partialFetches(poolDir);
            } catch (java.io.IOException e) {
                LOG.warnf("cannot list the transfers' progress in %s (%s): the audit leaves them out", poolDir, e.getMessage());
            }
        }
        return List.of();
    }

    /** The audit in the pool directory for {@code loopcsi doctor --data-dir} (OrphanList), rewritten when it changes. */
    private void keepOrphanList(DiskAudit audit) {
        if (poolDir == null || (audit.unclaimed().equals(lastOrphans.unclaimed()) && audit.missing().equals(lastOrphans.missing())
                && audit.abandoned().equals(lastOrphans.abandonedTransfers()))) {
            return;
        }
        try {
            OrphanList list = new OrphanList(pool, engine.nodeId(), Instant.now().toString(), audit.unclaimed(), audit.missing(),
                    audit.abandoned());
            list.write(poolDir);
            lastOrphans = list;
        } catch (RuntimeException e) {
            LOG.warnf("cannot write the orphan list in %s: %s", poolDir, e.getMessage());
        }
    }

    private LoopPoolNode ensureObject() {
        String name = HandoffNames.poolNode(pool, engine.nodeId());
        LoopPoolNode existing = client.resources(LoopPoolNode.class).withName(name).get();
        if (existing != null) {
            return existing;
        }
        LoopPoolNode n = new LoopPoolNode(name, new LoopPoolNodeSpec(pool, driver, engine.nodeId()));
        n.getMetadata().setLabels(HandoffNames.labels(pool, engine.nodeId()));
        try {
            StoragePool sp = client.resources(StoragePool.class).withName(pool).get();
            if (sp != null) {
                n.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion(sp.getApiVersion())
                        .withKind(sp.getKind()).withName(pool).withUid(sp.getMetadata().getUid()).build()));
            }
        } catch (KubernetesClientException e) {
            LOG.debugf("StoragePool %s not readable (%s): LoopPoolNode %s without an owner", pool, e.getMessage(), name);
        }
        try {
            return client.resource(n).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                return client.resources(LoopPoolNode.class).withName(name).get();
            }
            throw e;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
