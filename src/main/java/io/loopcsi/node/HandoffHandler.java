package io.loopcsi.node;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.EngineException;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.handoff.Codes;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.HandoffObject;
import io.loopcsi.handoff.HandoffStatus;
import io.loopcsi.handoff.Phase;

/**
 * The node's protocol for one kind of hand-off object, carried out with the local engine and
 * answered in the object's status; the kinds supply their steps.
 * <ul>
 * <li>The object's name must be {@code <pool>.<the ID of spec.name>}; else it is answered
 * INVALID_ARGUMENT once (nothing is made), or let go when it is being deleted.</li>
 * <li>Deletion deletes the files behind the node's finalizer; a refusal is answered DeleteFailed
 * with the engine's code and tried again after {@code retry}.</li>
 * <li>The files decide: an object the node made whose files are gone is answered Missing (NOT_FOUND)
 * once, never made again empty.</li>
 * <li>A generation answered is not carried out again (a retry raises spec.attempt). The finalizer
 * goes on before anything is made; a failure that left nothing on disk takes it off again.</li>
 * </ul>
 *
 * @param <T> the object's kind
 * @param <S> its status
 * @param <M> what the engine has on disk for it
 */
abstract class HandoffHandler<T extends CustomResource<?, S> & HandoffObject, S extends HandoffStatus, M> {

    protected final Logger log = Logger.getLogger(getClass());
    protected final VolumeProvider engine;
    protected final Duration retry;
    private final KubernetesClient client;
    private final Class<T> type;
    private final String pool;
    private final Function<String, T> cache;
    private final Runnable changed;
    /** In log lines: "volume", "snapshot", "group snapshot". */
    private final String kind;
    /** What of the object is in the pool directory, in log lines: "backing file", "image", "record". */
    private final String files;
    /** The rule for the name after "<pool>.", in the INVALID_ARGUMENT answer. */
    private final String nameRule;
    /**
     * The generation of each object this node last answered. The informer's copy can lag behind
     * the node's own writes; without this a stale copy would have the engine called again (in
     * vain, and holding the volume's lock while kubelet may be staging it).
     */
    private final Map<String, Long> answeredGeneration = new ConcurrentHashMap<>();

    HandoffHandler(KubernetesClient client, Class<T> type, String pool, VolumeProvider engine, Function<String, T> cache,
            Runnable changed, Duration retry, String kind, String files, String nameRule) {
        this.client = client;
        this.type = type;
        this.pool = pool;
        this.engine = engine;
        this.cache = cache;
        this.changed = changed;
        this.retry = retry;
        this.kind = kind;
        this.files = files;
        this.nameRule = nameRule;
    }

    /** Whether the spec is there and id is the ID of its name (and whatever else the kind needs to be carried out). */
    protected abstract boolean valid(T object, String id);

    /** What the engine has on disk for id, if anything. */
    protected abstract Optional<M> onDisk(String id);

    /** Deletes the object's files (none there: done). */
    protected abstract void deleteFiles(String id);

    /** Carries out the object's current spec and returns the answer to it. */
    protected abstract S carryOut(T object, String id, Optional<M> onDisk);

    /** A status based on the current one, answering the current generation with phase, code and message. */
    protected abstract S statusOf(T object, String phase, String code, String message);

    /** The answer for an object made here whose files are gone. */
    protected abstract S missing(T object, String id);

    /** The answer to a generation that could not be carried out. */
    protected S failed(T object, String code, String message) {
        return statusOf(object, Phase.FAILED, code, message);
    }

    /** The answer to a generation the engine refused. */
    protected S failed(T object, String id, EngineException e) {
        return failed(object, Codes.of(e.kind()), e.getMessage());
    }

    /** Records a refused deletion (it is tried again after {@code retry}). */
    protected void deleteRefused(T object, String id, EngineException e) {
        log.infof("%s %s: delete refused (%s): %s", kind, id, e.kind(), e.getMessage());
        write(object, statusOf(object, Phase.DELETE_FAILED, Codes.of(e.kind()), e.getMessage()));
    }

    /** Returns when to look again, if ever. */
    Optional<Duration> handle(String name) {
        T object = cache.apply(name);
        if (object == null) {
            answeredGeneration.remove(name);
            return Optional.empty();
        }
        String id = HandoffNames.idOf(pool, name);
        if (id == null || !valid(object, id)) {
            if (object.getMetadata().getDeletionTimestamp() != null) {
                ObjectWrites.removeFinalizer(client, type, object);
            } else if (!object.answered()) {
                write(object, failed(object, "INVALID_ARGUMENT", "object name " + name + " is not " + pool + "." + nameRule));
            }
            return Optional.empty();
        }
        if (object.getMetadata().getDeletionTimestamp() != null) {
            return delete(object, id);
        }
        Optional<M> onDisk = onDisk(id);
        if (object.created() && onDisk.isEmpty()) {
            if (!Phase.MISSING.equals(object.getStatus().getPhase())) {
                log.warnf("%s %s (%s) was made on this node but its %s is gone from the pool directory", kind, id, name, files);
                write(object, missing(object, id));
                changed.run();
            }
            return Optional.empty();
        }
        if (object.answered() || answeredGeneration.getOrDefault(name, 0L) >= object.getMetadata().getGeneration()) {
            return Optional.empty();
        }
        if (!ObjectWrites.addFinalizer(client, type, object)) {
            return Optional.empty(); // deleted meanwhile: its deletion event comes next
        }
        try {
            write(object, carryOut(object, id, onDisk));
        } catch (EngineException e) {
            if (e.kind() == EngineException.Kind.ABORTED) {
                return Optional.of(Duration.ofSeconds(1)); // another operation on the object (or a member volume) is in flight
            }
            log.infof("%s %s: %s %s", kind, id, e.kind(), e.getMessage());
            write(object, failed(object, id, e));
            if (onDisk(id).isEmpty()) {
                ObjectWrites.removeFinalizer(client, type, object); // nothing on disk to protect
            }
        }
        answeredGeneration.put(name, object.getMetadata().getGeneration());
        changed.run();
        return Optional.empty();
    }

    private Optional<Duration> delete(T object, String id) {
        if (!ObjectWrites.hasFinalizer(object)) {
            return Optional.empty();
        }
        try {
            deleteFiles(id);
        } catch (EngineException e) {
            deleteRefused(object, id, e);
            return Optional.of(retry);
        }
        ObjectWrites.removeFinalizer(client, type, object);
        changed.run();
        return Optional.empty();
    }

    protected void write(T object, S status) {
        ObjectWrites.status(client, type, object, status);
    }
}
