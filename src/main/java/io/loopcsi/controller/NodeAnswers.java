package io.loopcsi.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Predicate;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopSnapshotStatus;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;

/**
 * Waiting, with a bound, for a node's answer to an intent written into a hand-off object. A node
 * whose heartbeat is stale gets UNAVAILABLE at once; a node that does not answer in time gets
 * DEADLINE_EXCEEDED; both are retryable, and the intent stays recorded for when the node comes
 * back. A node's failure surfaces with the node's own gRPC code and message.
 */
final class NodeAnswers {

    private static final Logger LOG = Logger.getLogger(NodeAnswers.class);

    private final PoolInformers informers;
    private final PoolNodes nodes;
    private final KubernetesClient client;
    private final Duration answerTimeout;
    private final Clock clock;

    NodeAnswers(PoolInformers informers, PoolNodes nodes, KubernetesClient client, Duration answerTimeout, Clock clock) {
        this.informers = informers;
        this.nodes = nodes;
        this.client = client;
        this.answerTimeout = answerTimeout;
        this.clock = clock;
    }

    /**
     * Waits until the object (read from the informer, else the API server) satisfies done. Fails
     * fast with UNAVAILABLE when its node's heartbeat is stale, with DEADLINE_EXCEEDED after the
     * answer timeout; ABORTED when the object disappears meanwhile.
     */
    <T extends CustomResource<?, ?>> T await(Class<T> type, String name, String node, Predicate<T> done, String what) {
        Instant deadline = clock.instant().plus(answerTimeout);
        while (true) {
            T current = informers.cached(type, name);
            if (current == null) {
                current = informers.get(type, name);
            }
            if (current == null) {
                throw Status.ABORTED.withDescription(what + " was deleted while waiting for node " + node).asRuntimeException();
            }
            if (done.test(current)) {
                return current;
            }
            T fromServer = informers.get(type, name); // the informer may lag behind our own write
            if (fromServer != null && done.test(fromServer)) {
                return fromServer;
            }
            nodes.checkAlive(node, what);
            if (!clock.instant().isBefore(deadline)) {
                throw Status.DEADLINE_EXCEEDED.withDescription("node " + node + " has not answered for " + what + " in "
                        + answerTimeout.toSeconds() + "s; the request stays recorded, call again").asRuntimeException();
            }
            informers.pause(deadline);
        }
    }

    /** What a node last answered, from either kind of status. */
    private record Answer(String phase, String code, String message, Long observedGeneration) {

        static Answer of(CustomResource<?, ?> r) {
            if (r.getStatus() instanceof LoopVolumeStatus v) {
                return new Answer(v.getPhase(), v.getCode(), v.getMessage(), v.getObservedGeneration());
            }
            if (r.getStatus() instanceof LoopSnapshotStatus s) {
                return new Answer(s.getPhase(), s.getCode(), s.getMessage(), s.getObservedGeneration());
            }
            if (r.getStatus() instanceof LoopGroupSnapshotStatus g) {
                return new Answer(g.getPhase(), g.getCode(), g.getMessage(), g.getObservedGeneration());
            }
            return new Answer(null, null, null, null);
        }
    }

    /**
     * Deletes the object and waits until the node has deleted the files and released it. A
     * refusal the node gave before this call (it keeps retrying by itself) is not taken as the
     * answer: the call raises spec.attempt so the node tries again now, and waits for that try.
     */
    <T extends CustomResource<?, ?>> void awaitGone(Class<T> type, String name, String what) {
        T current = informers.get(type, name);
        if (current == null) {
            return;
        }
        if (current.getMetadata().getDeletionTimestamp() == null) {
            client.resources(type).withName(name).delete();
            LOG.infof("deleting %s on node %s", what, nodeOfObject(current));
            current = informers.get(type, name);
            if (current == null) {
                return;
            }
        } else if (Phase.DELETE_FAILED.equals(Answer.of(current).phase())) {
            try {
                current = client.resources(type).withName(name).edit(o -> {
                    if (o instanceof LoopVolume v) {
                        v.getSpec().setAttempt((v.getSpec().getAttempt() == null ? 0 : v.getSpec().getAttempt()) + 1);
                    } else if (o instanceof LoopSnapshot s) {
                        s.getSpec().setAttempt((s.getSpec().getAttempt() == null ? 0 : s.getSpec().getAttempt()) + 1);
                    } else if (o instanceof LoopGroupSnapshot g) {
                        g.getSpec().setAttempt((g.getSpec().getAttempt() == null ? 0 : g.getSpec().getAttempt()) + 1);
                    }
                    return o;
                });
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return;
                }
                throw e;
            }
        }
        long generation = current.getMetadata().getGeneration() == null ? 0 : current.getMetadata().getGeneration();
        Instant deadline = clock.instant().plus(answerTimeout);
        while (true) {
            current = informers.get(type, name);
            if (current == null) {
                return;
            }
            Answer a = Answer.of(current);
            if (Phase.DELETE_FAILED.equals(a.phase()) && a.observedGeneration() != null && a.observedGeneration() >= generation) {
                throw Codes.status(a.code(), "node " + nodeOfObject(current) + ": " + a.message()).asRuntimeException();
            }
            if (nodes.gone(nodeOfObject(current))) {
                releaseOfGoneNode(type, current, what);
                return;
            }
            nodes.checkAlive(nodeOfObject(current), what);
            if (!clock.instant().isBefore(deadline)) {
                throw Status.DEADLINE_EXCEEDED.withDescription("node " + nodeOfObject(current) + " has not deleted " + what + " in "
                        + answerTimeout.toSeconds() + "s; its deletion stays recorded, call again").asRuntimeException();
            }
            informers.pause(deadline);
        }
    }

    private static String nodeOfObject(CustomResource<?, ?> r) {
        if (r instanceof LoopVolume v) {
            return v.getSpec().getNode();
        }
        return r instanceof LoopGroupSnapshot g ? g.getSpec().getNode() : ((LoopSnapshot) r).getSpec().getNode();
    }

    /** Deletes an object of a gone node by dropping the node's finalizer (no one else would ever drop it). */
    private <T extends CustomResource<?, ?>> void releaseOfGoneNode(Class<T> type, T current, String what) {
        try {
            client.resources(type).withName(current.getMetadata().getName()).edit(o -> {
                List<String> f = o.getMetadata().getFinalizers() == null ? List.of() : o.getMetadata().getFinalizers();
                o.getMetadata().setFinalizers(f.stream().filter(x -> !HandoffNames.FINALIZER.equals(x)).toList());
                return o;
            });
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
        LOG.warnf("%s: node %s is gone (its Node object was deleted; %s): nothing left to free there, %s %s released",
                what, nodeOfObject(current), nodes.heartbeatOf(nodeOfObject(current)), type.getSimpleName(), current.getMetadata().getName());
    }
}
