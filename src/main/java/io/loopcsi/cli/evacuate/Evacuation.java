package io.loopcsi.cli.evacuate;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopVolume;

/**
 * Carries out a plan, one volume after the other, each through the steps of {@link MoveRecord}
 * (every step idempotent, the step reached recorded on the old PV). The copy is a CreateVolume of
 * the pool's own controller code (controller.ApiVolumeProvider: the LoopTransfer authorising the
 * target node to read the volume from the node evacuated, then the LoopVolume intent) with the old
 * volume as its content source and the target node as the only requisite topology; this process is
 * the controller for that call, with the kubeconfig's credentials. A volume whose claim is still in
 * use by a pod is refused (or its pods evicted, with --evict), and left untouched.
 */
public final class Evacuation implements AutoCloseable {

    /** How one volume ended. */
    public enum Outcome {
        MOVED, MOVED_KEPT, REFUSED, FAILED
    }

    public record Result(Move move, Outcome outcome, String detail) {
    }

    /** A move that stops here, with the reason (the volume stays as it is, or where its record says). */
    static final class Stop extends RuntimeException {
        final Outcome outcome;

        Stop(Outcome outcome, String message) {
            super(message);
            this.outcome = outcome;
        }
    }

    /** How long one call waits for the node's answer before the copy says how long it has been going. */
    static final Duration ANSWER = Duration.ofSeconds(15);
    static final Duration WAIT = Duration.ofSeconds(120);

    private final KubernetesClient client;
    private final String node;
    private final boolean keepSource;
    private final boolean evict;
    private final Duration copyTimeout;
    private final PrintStream out;
    private final Map<String, ApiVolumeProvider> providers = new HashMap<>();
    private boolean cordoned;
    private EvictionVersion evictionVersion;

    public Evacuation(KubernetesClient client, String node, boolean keepSource, boolean evict, Duration copyTimeout, PrintStream out) {
        this.client = client;
        this.node = node;
        this.keepSource = keepSource;
        this.evict = evict;
        this.copyTimeout = copyTimeout;
        this.out = out;
    }

    /** Every movable item of the plan, in order; the result of each (the ones that cannot move are REFUSED with their reason). */
    public List<Result> run(Plan plan) {
        List<Result> results = new ArrayList<>();
        int i = 0;
        int n = plan.moves().size();
        for (Move m : plan.moves()) {
            i++;
            String head = "[" + i + "/" + n + "] " + (m.claim() == null ? m.volumeId() : m.claim()) + " (" + m.volumeId() + ")";
            if (!m.movable()) {
                results.add(new Result(m, Outcome.REFUSED, m.reason()));
                out.println(head + ": left as it is: " + m.reason());
                continue;
            }
            long t0 = System.nanoTime();
            try {
                Outcome o = move(m, head);
                String d = MoveRecord.KEPT.equals(m.resume())
                        ? (o == Outcome.MOVED_KEPT ? "moved to " + m.target() + " before, source kept" : "moved to " + m.target() + " before, the kept source deleted")
                        : (o == Outcome.MOVED_KEPT ? "moved to " + m.target() + ", source kept" : "moved to " + m.target()) + " in "
                                + Duration.ofNanos(System.nanoTime() - t0).toSeconds() + " s";
                out.println(head + ": " + d);
                results.add(new Result(m, o, d));
            } catch (Stop s) {
                out.println(head + ": " + (s.outcome == Outcome.REFUSED ? "refused: " : "failed: ") + s.getMessage());
                results.add(new Result(m, s.outcome, s.getMessage()));
            } catch (StatusRuntimeException | KubernetesClientException | IllegalStateException e) {
                String msg = e instanceof StatusRuntimeException sre ? sre.getStatus().getCode() + ": " + sre.getStatus().getDescription() : e.getMessage();
                out.println(head + ": failed: " + msg + " (a new run continues from the step reached)");
                results.add(new Result(m, Outcome.FAILED, msg));
            }
            out.flush();
        }
        return results;
    }

    private Outcome move(Move m, String head) {
        PersistentVolume old = client.persistentVolumes().withName(m.oldPv()).get();
        if (old == null) {
            throw new Stop(Outcome.FAILED, "its PV " + m.oldPv() + " is gone");
        }
        LoopVolume lv = client.resources(LoopVolume.class).withName(HandoffNames.object(m.pool(), m.volumeId())).get();
        if (lv == null || !lv.created()) {
            throw new Stop(Outcome.FAILED, "volume " + m.volumeId() + " is gone from pool " + m.pool());
        }
        MoveRecord rec = MoveRecord.of(old);
        if (rec == null) {
            PersistentVolumeClaim claim = claim(m.claim());
            if (claim == null || !m.oldPv().equals(claim.getSpec().getVolumeName())) {
                throw new Stop(Outcome.REFUSED, "the claim " + m.claim() + " is no longer bound to " + m.oldPv());
            }
            stopPods(m, claim);
            rec = new MoveRecord(node, m.target(), m.newPv(), old.getSpec().getPersistentVolumeReclaimPolicy(), NewObjects.recordOf(claim),
                    MoveRecord.COPY);
            record(m.oldPv(), rec, true);
            out.println(head + ": recorded on PV " + m.oldPv() + " (reclaim policy Retain until the move is done)");
        }
        if (MoveRecord.COPY.equals(rec.step())) {
            PersistentVolumeClaim claim = claim(m.claim());
            if (claim != null && m.oldPv().equals(claim.getSpec().getVolumeName())) {
                stopPods(m, claim); // a run that stopped: a pod may have started since
            }
            VolumeMeta copy = copy(m, lv, rec, head);
            makePv(old, rec, copy);
            rec = record(m.oldPv(), rec.at(MoveRecord.CLAIM), false);
        }
        if (MoveRecord.CLAIM.equals(rec.step())) {
            rec = replaceClaim(m, rec, head);
        }
        if (MoveRecord.SOURCE.equals(rec.step()) || MoveRecord.KEPT.equals(rec.step())) {
            if (keepSource) {
                if (!MoveRecord.KEPT.equals(rec.step())) {
                    record(m.oldPv(), rec.at(MoveRecord.KEPT), false);
                }
                return Outcome.MOVED_KEPT;
            }
            deleteSource(m, head);
        }
        return Outcome.MOVED;
    }

    private PersistentVolumeClaim claim(String key) {
        String[] nn = key.split("/", 2);
        return client.persistentVolumeClaims().inNamespace(nn[0]).withName(nn[1]).get();
    }

    /** Refuses while pods use the claim, or with --evict cordons the node and evicts them, then waits until they are gone. */
    private void stopPods(Move m, PersistentVolumeClaim claim) {
        List<String> pods = PlanBuilder.usedBy(client.pods().inNamespace(claim.getMetadata().getNamespace()).list().getItems(), claim, m.oldPv());
        if (pods.isEmpty()) {
            return;
        }
        if (!evict) {
            throw new Stop(Outcome.REFUSED, "the claim is in use by " + String.join(", ", pods) + ": stop them first (or --evict)");
        }
        if (!cordoned) {
            client.nodes().withName(node).edit(n -> {
                n.getSpec().setUnschedulable(true);
                return n;
            });
            cordoned = true;
            out.println("node " + node + " cordoned (kubectl uncordon " + node + " undoes it)");
        }
        if (evictionVersion == null) {
            evictionVersion = EvictionVersion.of(client);
        }
        for (String p : pods) {
            String[] nn = p.split("/", 2);
            boolean evicted;
            try {
                evicted = evictionVersion.evict(client, nn[0], nn[1]);
            } catch (KubernetesClientException e) {
                throw new Stop(Outcome.REFUSED, "cannot evict pod " + p + ": " + e.getMessage());
            }
            if (!evicted) {
                throw new Stop(Outcome.REFUSED, "pod " + p + " cannot be evicted now (a PodDisruptionBudget forbids it); stop it and run again");
            }
            out.println("  pod " + p + " evicted (" + evictionVersion.apiVersion() + " Eviction)");
        }
        Instant deadline = Instant.now().plus(WAIT);
        while (true) {
            List<String> left = PlanBuilder.usedBy(client.pods().inNamespace(claim.getMetadata().getNamespace()).list().getItems(), claim,
                    m.oldPv());
            if (left.isEmpty()) {
                return;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new Stop(Outcome.REFUSED, "pods still use the claim " + WAIT.toSeconds() + " s after their eviction: " + String.join(", ", left));
            }
            sleep(1000);
        }
    }

    /** Writes the record (and, the first time, the reclaim policy Retain) on the old PV; the record written. */
    private MoveRecord record(String pvName, MoveRecord rec, boolean first) {
        client.persistentVolumes().withName(pvName).edit(pv -> {
            Map<String, String> a = pv.getMetadata().getAnnotations() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(pv.getMetadata().getAnnotations());
            a.put(MoveRecord.ANNOTATION, rec.json());
            pv.getMetadata().setAnnotations(a);
            if (first) {
                pv.getSpec().setPersistentVolumeReclaimPolicy("Retain"); // the claim's deletion must not take the volume
            }
            return pv;
        });
        return rec;
    }

    private ApiVolumeProvider provider(String pool, String driver) {
        return providers.computeIfAbsent(pool, p -> new ApiVolumeProvider(client, p, driver, ANSWER, PlanBuilder.STALE_AFTER, Clock.systemUTC())
                .start());
    }

    /**
     * The copy on the target node: a clone of the old volume (same mode, filesystem, size, parameters
     * and provisioning), named after the new PV as csi-provisioner names its requests, asked for on the
     * target node only. A call that ends before the node answers is made again (the same request finds
     * the same LoopVolume and renews the transfer's window) until copyTimeout.
     */
    private VolumeMeta copy(Move m, LoopVolume lv, MoveRecord rec, String head) {
        Map<String, String> params = new LinkedHashMap<>(lv.getSpec().getParameters() == null ? Map.of() : lv.getSpec().getParameters());
        if (params.containsKey("csi.storage.k8s.io/pv/name")) { // csi-provisioner's --extra-create-metadata, for the new PV
            params.put("csi.storage.k8s.io/pv/name", rec.newPv());
        }
        Map<String, String> mutable = lv.getSpec().getMutableParameters() == null ? Map.of() : lv.getSpec().getMutableParameters();
        VolumeMode mode = lv.getSpec().getMode();
        CreateRequest req = new CreateRequest(rec.newPv(), lv.getStatus().getCapacityBytes(), 0, mode,
                mode == VolumeMode.BLOCK ? "" : lv.getSpec().getFsType(), null, m.volumeId(), params,
                MutableParameters.parse("mutableParameters", mutable));
        Placement on = new Placement(List.of(rec.to()), List.of(rec.to()));
        ApiVolumeProvider provider = provider(m.pool(), lv.getSpec().getDriver());
        Instant started = Instant.now();
        out.println(head + ": copying " + Sizes.format(lv.getStatus().getCapacityBytes()) + " from node " + node + " to node " + rec.to());
        out.flush();
        while (true) {
            try {
                return provider.createVolume(req, on);
            } catch (StatusRuntimeException e) {
                Status.Code c = e.getStatus().getCode();
                boolean again = c == Status.Code.DEADLINE_EXCEEDED || c == Status.Code.ABORTED || c == Status.Code.UNAVAILABLE;
                if (!again || Duration.between(started, Instant.now()).compareTo(copyTimeout) > 0) {
                    throw new Stop(Outcome.FAILED, "the copy on node " + rec.to() + ": " + c + ": " + e.getStatus().getDescription()
                            + " (the old volume is untouched; a new run continues)");
                }
                out.println(head + ": copying, " + Duration.between(started, Instant.now()).toSeconds() + " s so far ("
                        + e.getStatus().getDescription() + ")");
                out.flush();
                if (c != Status.Code.DEADLINE_EXCEEDED) {
                    sleep(2000);
                }
            }
        }
    }

    /** The new PV, as csi-provisioner writes it; one already there must be this copy's. */
    private void makePv(PersistentVolume old, MoveRecord rec, VolumeMeta copy) {
        StorageClass sc = old.getSpec().getStorageClassName() == null ? null
                : client.storage().v1().storageClasses().withName(old.getSpec().getStorageClassName()).get();
        PersistentVolume pv = NewObjects.pv(old, rec, copy.id(), copy.capacityBytes(), sc);
        try {
            client.persistentVolumes().resource(pv).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            PersistentVolume there = client.persistentVolumes().withName(rec.newPv()).get();
            if (there == null || there.getSpec().getCsi() == null || !copy.id().equals(there.getSpec().getCsi().getVolumeHandle())) {
                throw new Stop(Outcome.FAILED, "a PV " + rec.newPv() + " that is not this copy's exists");
            }
        }
    }

    /**
     * The old claim deleted (only the one the move started from: its UID) and made again, bound ahead to
     * the new PV; waits until it is Bound. A pod that started using the old claim after its copy was
     * made may have written since: the copy is deleted and the move goes back to its copy step.
     */
    private MoveRecord replaceClaim(Move m, MoveRecord rec, String head) {
        PersistentVolumeClaim was = NewObjects.claimOf(rec);
        String ns = was.getMetadata().getNamespace();
        String name = was.getMetadata().getName();
        PersistentVolumeClaim cur = client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
        if (cur != null && Objects.equals(cur.getMetadata().getUid(), was.getMetadata().getUid())) {
            List<String> pods = PlanBuilder.usedBy(client.pods().inNamespace(ns).list().getItems(), cur, m.oldPv());
            if (!pods.isEmpty()) {
                dropCopy(m, rec);
                throw new Stop(Outcome.REFUSED, "the claim came into use by " + String.join(", ", pods)
                        + " after its copy was made: the copy is deleted; stop them and run again");
            }
            client.persistentVolumeClaims().inNamespace(ns).withName(name).delete();
            cur = awaitGone(ns, name);
        }
        if (cur == null) {
            client.persistentVolumeClaims().inNamespace(ns).resource(NewObjects.claimAgain(rec)).create();
            out.println(head + ": claim " + ns + "/" + name + " made again, bound ahead to PV " + rec.newPv());
        } else if (!rec.newPv().equals(cur.getSpec().getVolumeName())) {
            throw new Stop(Outcome.FAILED, "another claim " + ns + "/" + name + " exists (volumeName " + cur.getSpec().getVolumeName()
                    + "); the copy is PV " + rec.newPv() + ": bind it by hand or delete that claim and run again");
        }
        awaitBound(ns, name, rec);
        return record(m.oldPv(), rec.at(MoveRecord.SOURCE), false);
    }

    /**
     * Waits until the claim made again is Bound. Once the PV controller has bound the PV's side, the
     * claim gets {@link NewObjects#MOVED_FROM}: an update of the claim, so the PV controller syncs it again
     * if its own sync lost the race it runs with itself on a pre-bound pair (kubernetes/kubernetes#85659;
     * without it, 4 of 5 moves of the evacuation bench waited up to 15 s for the periodic resync).
     */
    private void awaitBound(String ns, String name, MoveRecord rec) {
        Instant deadline = Instant.now().plus(WAIT);
        boolean marked = false;
        while (true) {
            PersistentVolumeClaim c = client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
            if (!marked && NewObjects.pvBoundTo(client.persistentVolumes().withName(rec.newPv()).get(), c)) {
                client.persistentVolumeClaims().inNamespace(ns).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                        Serialization.asJson(Map.of("metadata", Map.of("annotations", Map.of(NewObjects.MOVED_FROM, node)))));
                marked = true;
                continue;
            }
            if (marked && c != null && c.getStatus() != null && "Bound".equals(c.getStatus().getPhase())) {
                return;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new Stop(Outcome.FAILED, "the claim is not Bound to PV " + rec.newPv() + " after " + WAIT.toSeconds()
                        + " s (is kube-controller-manager running?); a new run continues");
            }
            sleep(200);
        }
    }

    private PersistentVolumeClaim awaitGone(String ns, String name) {
        Instant deadline = Instant.now().plus(WAIT);
        while (true) {
            PersistentVolumeClaim c = client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
            if (c == null) {
                return null;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new Stop(Outcome.FAILED, "the old claim " + ns + "/" + name + " is still there " + WAIT.toSeconds()
                        + " s after its deletion (finalizers " + c.getMetadata().getFinalizers() + "); a new run continues");
            }
            sleep(500);
        }
    }

    private void dropCopy(Move m, MoveRecord rec) {
        PersistentVolume pv = client.persistentVolumes().withName(rec.newPv()).get();
        if (pv != null) {
            provider(m.pool(), pv.getSpec().getCsi().getDriver()).deleteVolume(pv.getSpec().getCsi().getVolumeHandle());
            client.persistentVolumes().withName(rec.newPv()).delete();
        }
        record(m.oldPv(), rec.at(MoveRecord.COPY), false);
    }

    /** The old volume deleted through the driver (the node evacuated deletes its files), then its PV. */
    private void deleteSource(Move m, String head) {
        LoopVolume lv = client.resources(LoopVolume.class).withName(HandoffNames.object(m.pool(), m.volumeId())).get();
        if (lv != null) {
            ApiVolumeProvider provider = provider(m.pool(), lv.getSpec().getDriver());
            Instant deadline = Instant.now().plus(WAIT);
            while (true) {
                try {
                    provider.deleteVolume(m.volumeId());
                    break;
                } catch (StatusRuntimeException e) {
                    Status.Code c = e.getStatus().getCode();
                    if (c == Status.Code.NOT_FOUND) {
                        break;
                    }
                    if (Instant.now().isAfter(deadline) || !(c == Status.Code.FAILED_PRECONDITION || c == Status.Code.DEADLINE_EXCEEDED
                            || c == Status.Code.ABORTED)) {
                        throw new Stop(Outcome.FAILED, "moved to " + m.target() + " (the claim is bound to PV " + m.newPv()
                                + "), but the old volume cannot be deleted: " + c + ": " + e.getStatus().getDescription()
                                + "; a new run deletes it");
                    }
                    sleep(1000);
                }
            }
        }
        client.persistentVolumes().withName(m.oldPv()).delete();
        out.println(head + ": old volume " + m.volumeId() + " and PV " + m.oldPv() + " deleted");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Stop(Outcome.FAILED, "interrupted; a new run continues from the step reached");
        }
    }

    @Override
    public void close() {
        providers.values().forEach(ApiVolumeProvider::close);
    }
}
