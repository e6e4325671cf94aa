package io.loopcsi.operator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.LostNodePolicy;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.status.LostNodes;
import io.loopcsi.operator.status.PoolEvents;

/**
 * What the operator does about nodes that are gone ({@link LostNodes#NODE_DELETED}: Node object
 * deleted, heartbeat stale). Always: the LoopPoolNode of such a node is deleted once no LoopVolume or
 * LoopSnapshot of the pool names it (it is then only a stale report). With {@link LostNodePolicy#ReleaseClaims}:
 * the PVCs bound to its volumes' PVs are deleted (only the claim the PV names, by UID: a StatefulSet's
 * re-created claim of the same name is new and is left alone), the PVs too (a Retain PV would otherwise
 * stay Released forever), and the LoopVolumes are released (the node's finalizer dropped: no node will
 * ever free them). A node that only stopped reporting is never acted on. Each step is idempotent and
 * repeated at the next reconcile until nothing is left.
 */
public final class LostNodeRelease {

    private static final Logger LOG = Logger.getLogger(LostNodeRelease.class);

    /** What to delete for the gone nodes. */
    public record Plan(List<String> nodes, List<ObjectReference> claims, List<String> persistentVolumes, List<String> loopVolumes, List<String> poolNodes) {

        boolean isEmpty() {
            return claims.isEmpty() && persistentVolumes.isEmpty() && loopVolumes.isEmpty() && poolNodes.isEmpty();
        }
    }

    private LostNodeRelease() {
    }

    /** Pure: the plan for the pool's lost nodes, its LoopVolumes, LoopSnapshots, LoopPoolNodes and the PVs of its driver. */
    public static Plan plan(StoragePool pool, List<LostNode> lost, Collection<LoopVolume> volumes, Collection<LoopSnapshot> snapshots,
            Collection<LoopPoolNode> reports, Collection<PersistentVolume> pvs) {
        Set<String> gone = lost.stream().filter(n -> LostNodes.NODE_DELETED.equals(n.getReason())).map(LostNode::getNode).collect(Collectors.toSet());
        String name = pool.getMetadata().getName();
        boolean release = pool.getSpec().getLostNodes() == LostNodePolicy.ReleaseClaims;
        List<ObjectReference> claims = new ArrayList<>();
        List<String> pvNames = new ArrayList<>();
        List<String> loopVolumes = new ArrayList<>();
        if (release) {
            for (LoopVolume v : volumes) {
                if (v.getSpec() == null || !gone.contains(v.getSpec().getNode())) {
                    continue;
                }
                String id = HandoffNames.idOf(name, v.getMetadata().getName());
                for (PersistentVolume pv : pvs) {
                    if (pv.getSpec() != null && pv.getSpec().getCsi() != null && pool.driverName().equals(pv.getSpec().getCsi().getDriver())
                            && id != null && id.equals(pv.getSpec().getCsi().getVolumeHandle())) {
                        if (pv.getSpec().getClaimRef() != null && pv.getSpec().getClaimRef().getName() != null) {
                            claims.add(pv.getSpec().getClaimRef());
                        }
                        pvNames.add(pv.getMetadata().getName());
                    }
                }
                loopVolumes.add(v.getMetadata().getName());
            }
        }
        List<String> poolNodes = new ArrayList<>();
        for (LoopPoolNode r : reports) {
            String node = r.getSpec() == null ? null : r.getSpec().getNode();
            boolean named = volumes.stream().anyMatch(v -> v.getSpec() != null && node != null && node.equals(v.getSpec().getNode()))
                    || snapshots.stream().anyMatch(s -> s.getSpec() != null && node != null && node.equals(s.getSpec().getNode()));
            if (node != null && gone.contains(node) && !named) {
                poolNodes.add(r.getMetadata().getName());
            }
        }
        return new Plan(gone.stream().sorted().toList(), claims, pvNames, loopVolumes, poolNodes);
    }

    /** Carries the plan out; an Event names what was released. A failure is logged and tried again at the next reconcile. */
    public static void apply(KubernetesClient client, StoragePool pool, Plan plan) {
        if (plan.isEmpty()) {
            return;
        }
        List<String> released = new ArrayList<>();
        try {
            for (ObjectReference ref : plan.claims()) {
                PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ref.getNamespace()).withName(ref.getName()).get();
                if (pvc != null && (ref.getUid() == null || ref.getUid().equals(pvc.getMetadata().getUid()))
                        && pvc.getMetadata().getDeletionTimestamp() == null) {
                    client.persistentVolumeClaims().inNamespace(ref.getNamespace()).withName(ref.getName()).delete();
                    released.add("PersistentVolumeClaim " + ref.getNamespace() + "/" + ref.getName());
                }
            }
            for (String pv : plan.persistentVolumes()) {
                PersistentVolume current = client.persistentVolumes().withName(pv).get();
                if (current != null && current.getMetadata().getDeletionTimestamp() == null) {
                    client.persistentVolumes().withName(pv).delete();
                    released.add("PersistentVolume " + pv);
                }
            }
            for (String lv : plan.loopVolumes()) {
                if (client.resources(LoopVolume.class).withName(lv).get() == null) {
                    continue;
                }
                client.resources(LoopVolume.class).withName(lv).edit(o -> {
                    o.getMetadata().setFinalizers(o.getMetadata().getFinalizers() == null ? List.of()
                            : o.getMetadata().getFinalizers().stream().filter(f -> !HandoffNames.FINALIZER.equals(f)).toList());
                    return o;
                });
                client.resources(LoopVolume.class).withName(lv).delete();
                released.add("LoopVolume " + lv);
            }
            for (String n : plan.poolNodes()) {
                client.resources(LoopPoolNode.class).withName(n).delete();
                LOG.infof("StoragePool %s: LoopPoolNode %s deleted: its Node is gone and nothing of the pool is left on it",
                        pool.getMetadata().getName(), n);
            }
        } catch (KubernetesClientException e) {
            LOG.warnf("StoragePool %s: releasing the claims of deleted nodes: %s (tried again at the next reconcile)", pool.getMetadata().getName(),
                    e.getMessage());
        }
        if (!released.isEmpty()) {
            String message = "released the claims of deleted node(s) " + String.join(", ", plan.nodes())
                    + " (spec.lostNodes: ReleaseClaims): deleted " + String.join(", ", released)
                    + "; their data was on those nodes, their owners (e.g. StatefulSets) re-create the claims elsewhere";
            LOG.warnf("StoragePool %s: %s", pool.getMetadata().getName(), message);
            PoolEvents.warning(client, pool, "ClaimsReleased", message);
        }
    }
}
