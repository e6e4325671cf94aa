package io.loopcsi.node;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.CustomResource;
import io.loopcsi.csi.DriverConfig;
import io.loopcsi.csi.Endpoint;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.engine.Ids;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.transfer.TransferObserver;

/**
 * The node role beyond CSI Node (which the csi package serves on the socket): it carries out
 * this node's LoopVolumes, LoopSnapshots and LoopGroupSnapshots with the local engine, publishes the node's capacity
 * and registers the driver with kubelet. Informers watch only objects labelled with this pool
 * and this node; a periodic resync re-checks every object against the files.
 */
@Singleton
public class NodeRole {

    private static final Logger LOG = Logger.getLogger(NodeRole.class);
    private static final Duration RESYNC = Duration.ofSeconds(30);

    private final List<AutoCloseable> running = new ArrayList<>();
    private volatile SharedIndexInformer<LoopVolume> volumes;
    private volatile SharedIndexInformer<LoopSnapshot> snapshots;
    private volatile SharedIndexInformer<LoopGroupSnapshot> groups;
    private volatile KubeletRegistration registration;
    private volatile CapacityPublisher publisher;
    private volatile Duration heartbeat;

    private final DriverConfig config;
    private final NodeRoleConfig nodeConfig;
    private final Instance<KubernetesClient> clients;
    private final Instance<VolumeProvider> providers;
    /** The same engine as the provider (which is a client proxy, not a VolumeEngine): cross-node restores need its own call. */
    private final Instance<VolumeEngine> engines;

    private final Instance<TransferObserver> transferMetrics;

    NodeRole(DriverConfig config, NodeRoleConfig nodeConfig, Instance<KubernetesClient> clients, Instance<VolumeProvider> providers,
            Instance<VolumeEngine> engines, Instance<TransferObserver> transferMetrics) {
        this.engines = engines;
        this.transferMetrics = transferMetrics;
        this.config = config;
        this.nodeConfig = nodeConfig;
        this.clients = clients;
        this.providers = providers;
    }

    /**
     * Lists and watches this node's objects, publishes the capacity and binds kubelet's registration
     * socket: roles.RoleWiring, in the node role, before the sockets are published.
     */
    public void start() throws IOException {
        String pool = nodeConfig.pool().filter(p -> !p.isBlank())
                .orElseThrow(() -> new IllegalStateException("the node role needs --pool (the StoragePool it serves)"));
        VolumeProvider engine = providers.get();
        String node = engine.nodeId();
        KubernetesClient client = clients.get();
        heartbeat = nodeConfig.heartbeat();

        volumes = client.resources(LoopVolume.class).withLabel(HandoffNames.POOL_LABEL, pool).withLabel(HandoffNames.NODE_LABEL, node)
                .runnableInformer(RESYNC.toMillis());
        snapshots = client.resources(LoopSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool)
                .withLabel(HandoffNames.NODE_LABEL, node).runnableInformer(RESYNC.toMillis());
        groups = client.resources(LoopGroupSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool)
                .withLabel(HandoffNames.NODE_LABEL, node).runnableInformer(RESYNC.toMillis());
        publisher = new CapacityPublisher(client, pool, config.driverName(), engine, () -> claims(pool), Path.of(config.dataDir()));
        running.add(publisher);
        // the transfer server first: the volume handler fetches with its keys (issue 35)
        TransferFetch fetch = null;
        Optional<String> transfers = nodeConfig.transferAddress().filter(a -> !a.isBlank());
        if (transfers.isPresent()) {
            TransferEndpoint t = TransferEndpoint.start(transfers.get(), client, pool, engines.get(), Path.of(config.dataDir()),
                    nodeConfig.transferNamespace().orElseThrow(() -> new IllegalStateException("a transfer address needs the node pods' namespace")),
                    nodeConfig.transferNodeAccount().orElseThrow(() -> new IllegalStateException(
                            "a transfer address needs the node pods' ServiceAccount and DaemonSet name")),
                    TransferEndpoint.limits(nodeConfig.transferBandwidth(), nodeConfig.transferConcurrency()), nodeConfig.transferSweep(),
                    transferMetrics.get(), new AbandonedFetches(Path.of(config.dataDir()), node,
                            id -> volumes.getStore().getByKey(HandoffNames.object(pool, id)) != null, () -> volumes.hasSynced(), engines.get(),
                            java.time.Clock.systemUTC()));
            running.add(t);
            String advertised = nodeConfig.transferAdvertiseAddress().filter(a -> !a.isBlank()).orElse(t.address());
            publisher.transferEndpoint(t.fingerprint(), advertised);
            fetch = t.fetcher(client, pool, engines.get(), TransferFetch.path(nodeConfig.transferTokenFile()).orElse(null),
                    transferMetrics.get(), nodeConfig.transferConcurrency());
        }
        VolumeHandler vh = new VolumeHandler(client, pool, engine, name -> volumes.getStore().getByKey(name), publisher::changed,
                nodeConfig.retry(), fetch);
        SnapshotHandler sh = new SnapshotHandler(client, pool, engine, name -> snapshots.getStore().getByKey(name), publisher::changed,
                nodeConfig.retry());
        GroupSnapshotHandler gh = new GroupSnapshotHandler(client, pool, engine, name -> groups.getStore().getByKey(name),
                publisher::changed, nodeConfig.retry());
        WorkQueue queue = new WorkQueue("loopcsi-node", 4, key -> switch (key.charAt(0)) {
            case 'v' -> vh.handle(key.substring(2));
            case 'g' -> gh.handle(key.substring(2));
            default -> sh.handle(key.substring(2));
        });
        running.add(queue);
        volumes.addEventHandler(enqueue(queue, "v/"));
        snapshots.addEventHandler(enqueue(queue, "s/"));
        groups.addEventHandler(enqueue(queue, "g/"));
        running.add(volumes);
        running.add(snapshots);
        running.add(groups);
        try {
            // the three lists at once: they are on the path to the first Probe (the socket is published
            // after start-up), and each is a round trip to the API server (#25, the node's restart)
            var listed = java.util.concurrent.CompletableFuture.allOf(volumes.start().toCompletableFuture(),
                    snapshots.start().toCompletableFuture(), groups.start().toCompletableFuture());
            listed.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot list the LoopVolumes/LoopSnapshots/LoopGroupSnapshots of node " + node + " in pool " + pool
                    + ": " + e, e);
        }
        // The capacity is written before kubelet learns of the driver: kubelet's registration updates
        // CSINode, on which csi-provisioner asks GetCapacity for the node at once, and a 0 it gets
        // then (no LoopPoolNode yet) is published by no release and asked again only a poll later.
        publisher.publishNow();
        publisher.start(heartbeat);

        Path csiSocket = Endpoint.parse(config.endpoint().orElseThrow(() -> new IllegalStateException("no CSI endpoint"))).socket();
        if (csiSocket == null) {
            throw new IllegalStateException("the node role serves CSI on a unix socket (kubelet's plugin registration names a socket)");
        }
        Path regSocket = Path.of(nodeConfig.registrationSocket().filter(s -> !s.isBlank())
                .orElse("/var/lib/kubelet/plugins_registry/" + config.driverName() + "-reg.sock"));
        registration = new KubeletRegistration(regSocket, config.driverName(), csiSocket).start();
        running.add(registration);
        LOG.infof("loopcsi node %s serving pool %s (driver %s): %d LoopVolumes, %d LoopSnapshots of this node",
                node, pool, config.driverName(), volumes.getStore().list().size(), snapshots.getStore().list().size());
    }

    private static <T extends CustomResource<?, ?>> ResourceEventHandler<T> enqueue(WorkQueue queue, String prefix) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                queue.add(prefix + obj.getMetadata().getName());
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                queue.add(prefix + newObj.getMetadata().getName());
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                // deleted objects need nothing: the node's finalizer held them until their files were gone
            }
        };
    }

    /** IDs named by this node's objects, and the objects it made (for the disk audit). */
    private CapacityPublisher.Claims claims(String pool) {
        Set<String> claimed = new HashSet<>();
        List<DiskAudit.Made> made = new ArrayList<>();
        for (LoopVolume v : volumes.getStore().list()) {
            String id = HandoffNames.idOf(pool, v.getMetadata().getName());
            claimed.add(id);
            if (v.created() && v.getMetadata().getDeletionTimestamp() == null) {
                made.add(new DiskAudit.Made(v.getMetadata().getName(), id));
            }
        }
        for (LoopSnapshot s : snapshots.getStore().list()) {
            String id = HandoffNames.idOf(pool, s.getMetadata().getName());
            claimed.add(id);
            if (s.created() && s.getMetadata().getDeletionTimestamp() == null) {
                made.add(new DiskAudit.Made(s.getMetadata().getName(), id));
            }
        }
        for (LoopGroupSnapshot g : groups.getStore().list()) {
            // the members are snapshots on disk that no LoopSnapshot names: the group claims them
            boolean live = g.created() && g.getMetadata().getDeletionTimestamp() == null;
            for (LoopGroupSnapshotStatus.Member m : g.created() ? g.getStatus().getMembers() : List.<LoopGroupSnapshotStatus.Member>of()) {
                claimed.add(m.getSnapshotId());
                if (live) {
                    made.add(new DiskAudit.Made(g.getMetadata().getName(), m.getSnapshotId()));
                }
            }
            if (!g.created() && g.getSpec() != null && g.getSpec().getName() != null && g.getSpec().getSourceVolumeIds() != null) {
                // being made: its members may be on disk before the node answers
                g.getSpec().getSourceVolumeIds().forEach(v -> claimed.add(Ids.memberSnapshotIdFor(g.getSpec().getName(), v)));
            }
        }
        return new CapacityPublisher.Claims(claimed, made);
    }

    /** For the health checks: empty when the role is well, else what is wrong. */
    Optional<String> problem() {
        if (volumes == null) {
            return Optional.empty(); // not the node role
        }
        if (registration != null && Boolean.FALSE.equals(registration.registered())) {
            return Optional.of("kubelet refused the registration: " + registration.error());
        }
        if (!volumes.isRunning() || !snapshots.isRunning() || !groups.isRunning()) {
            return Optional.of("the LoopVolume/LoopSnapshot/LoopGroupSnapshot informers stopped");
        }
        return Optional.empty();
    }

    boolean isNodeRole() {
        return volumes != null;
    }

    public void stop() {
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception e) {
                LOG.debugf("stopping %s: %s", running.get(i), e);
            }
        }
        running.clear();
    }
}
