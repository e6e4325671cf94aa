package io.loopcsi.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.grpc.Status;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;

/**
 * The controller's view of one pool's hand-off objects: informers of its LoopVolumes,
 * LoopSnapshots, LoopGroupSnapshots and LoopPoolNodes (by the pool label), reads that go to the
 * API server when a call decides on an object (an informer may lag behind our own write), and a
 * wake-up for callers waiting on a node's answer: any change of any of them ends a {@link #pause}.
 */
final class PoolInformers implements AutoCloseable {

    private static final long POLL_MILLIS = 1000;

    private final KubernetesClient client;
    private final String pool;
    private final Clock clock;
    private final Object changes = new Object();
    private SharedIndexInformer<LoopVolume> volumes;
    private SharedIndexInformer<LoopSnapshot> snapshots;
    private SharedIndexInformer<LoopGroupSnapshot> groups;
    private SharedIndexInformer<LoopPoolNode> nodes;

    PoolInformers(KubernetesClient client, String pool, Clock clock) {
        this.client = client;
        this.pool = pool;
        this.clock = clock;
    }

    /** Starts the informers and waits for their first list. */
    PoolInformers start() {
        volumes = client.resources(LoopVolume.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        snapshots = client.resources(LoopSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        groups = client.resources(LoopGroupSnapshot.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        nodes = client.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, pool).runnableInformer(0);
        volumes.addEventHandler(wake());
        snapshots.addEventHandler(wake());
        groups.addEventHandler(wake());
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

    /** Waits for the next change of any of the pool's objects, at most a second and never past the deadline; CANCELLED when interrupted. */
    void pause(Instant deadline) {
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

    @Override
    public void close() {
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] { volumes, snapshots, groups, nodes }) {
            if (i != null) {
                i.close();
            }
        }
    }

    String pool() {
        return pool;
    }

    /** The object as the API server has it now (null when there is none). */
    <T extends CustomResource<?, ?>> T get(Class<T> type, String name) {
        return client.resources(type).withName(name).get();
    }

    /** A LoopVolume, LoopSnapshot or LoopGroupSnapshot as its informer has it (null when unknown). */
    <T extends CustomResource<?, ?>> T cached(Class<T> type, String name) {
        SharedIndexInformer<?> informer = type == LoopVolume.class ? volumes : type == LoopGroupSnapshot.class ? groups : snapshots;
        return type.cast(informer.getStore().getByKey(name));
    }

    /** The volume as the informer has it (null when unknown). */
    LoopVolume cachedVolume(String volumeId) {
        return volumes.getStore().getByKey(HandoffNames.object(pool, volumeId));
    }

    java.util.List<LoopVolume> volumes() {
        return volumes.getStore().list();
    }

    java.util.List<LoopSnapshot> snapshots() {
        return snapshots.getStore().list();
    }

    java.util.List<LoopGroupSnapshot> groups() {
        return groups.getStore().list();
    }

    /** A node's LoopPoolNode of this pool (null when it never published one). */
    LoopPoolNode poolNode(String node) {
        return nodes.getStore().getByKey(HandoffNames.poolNode(pool, node));
    }

    /** The nodes that published a LoopPoolNode of this pool (fresh or not), by node name. */
    Map<String, LoopPoolNode> nodeMap() {
        Map<String, LoopPoolNode> m = new HashMap<>();
        for (LoopPoolNode n : nodes.getStore().list()) {
            if (n.getSpec() != null && n.getSpec().getNode() != null) {
                m.put(n.getSpec().getNode(), n);
            }
        }
        return m;
    }
}
