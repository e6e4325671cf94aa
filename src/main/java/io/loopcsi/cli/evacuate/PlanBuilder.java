package io.loopcsi.cli.evacuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;

/**
 * The plan of an evacuation, a pure function of the cluster's state: for each volume of a pool on
 * the node, the claim bound to it, the pods using that claim, and the node it goes to; or why it
 * cannot move. A move that a run started (its old PV carries a {@link MoveRecord}) keeps the target
 * it recorded, whatever the capacities say now. A new target is a node of the same pool that serves
 * (fresh heartbeat), publishes a transfer endpoint, meets the claim's StorageClass
 * allowedTopologies, the pool's nodeSelector and is not cordoned ({@link TargetRules}), and has room
 * for the volume's size and provisioning, counting what this plan already sends there; the node
 * with most room first (as the controller's NodeChooser ranks nodes).
 */
public final class PlanBuilder {

    /** As the controller's default --node-stale-after: a node silent for longer is not serving. */
    static final Duration STALE_AFTER = Duration.ofSeconds(60);

    private PlanBuilder() {
    }

    /** pool: only that pool's volumes (null: every pool's). */
    public static Plan build(ClusterState s, String node, String pool) {
        Map<String, PersistentVolume> pvByHandle = new HashMap<>();
        for (PersistentVolume pv : s.pvs()) {
            if (pv.getSpec() != null && pv.getSpec().getCsi() != null) {
                pvByHandle.put(pv.getSpec().getCsi().getDriver() + "/" + pv.getSpec().getCsi().getVolumeHandle(), pv);
            }
        }
        Map<String, PersistentVolumeClaim> claims = new HashMap<>();
        s.claims().forEach(c -> claims.put(c.getMetadata().getNamespace() + "/" + c.getMetadata().getName(), c));
        Map<String, Long> planned = new HashMap<>(); // bytes this plan sends to each node
        List<LoopVolume> onNode = s.volumes().stream()
                .filter(v -> v.getSpec() != null && node.equals(v.getSpec().getNode()) && (pool == null || pool.equals(v.getSpec().getPool())))
                .sorted(Comparator.comparing((LoopVolume v) -> v.getSpec().getPool()).thenComparing(v -> v.getMetadata().getName())).toList();
        List<Move> moves = new ArrayList<>();
        Map<String, List<String>> left = snapshotsLeft(s, node);
        for (LoopVolume v : onNode) {
            Move m = item(s, node, v, pvByHandle, claims, planned);
            moves.add(m.withSnapshotsLeft(left.getOrDefault(m.pool() + "/" + m.volumeId(), List.of())));
        }
        return new Plan(node, moves);
    }

    /**
     * The snapshots on the node, by pool/source volume ID: LoopSnapshots and the members of
     * LoopGroupSnapshots made there (a snapshot lives where its source was cut, and an evacuation
     * moves none), each named by the VolumeSnapshot its VolumeSnapshotContent binds, when one does.
     */
    static Map<String, List<String>> snapshotsLeft(ClusterState s, String node) {
        Map<String, String> byHandle = new HashMap<>(); // driver/snapshotHandle -> VolumeSnapshot ns/name
        for (GenericKubernetesResource c : s.snapshotContents()) {
            Map<String, Object> spec = map(c.getAdditionalProperties().get("spec"));
            Map<String, Object> status = map(c.getAdditionalProperties().get("status"));
            Map<String, Object> ref = map(spec.get("volumeSnapshotRef"));
            Map<String, Object> source = map(spec.get("source"));
            Object handle = status.get("snapshotHandle") != null ? status.get("snapshotHandle") : source.get("snapshotHandle");
            if (handle != null && spec.get("driver") != null && ref.get("name") != null) {
                byHandle.put(spec.get("driver") + "/" + handle, ref.get("namespace") + "/" + ref.get("name"));
            }
        }
        Map<String, List<String>> out = new HashMap<>();
        for (LoopSnapshot ls : s.snapshots()) {
            if (ls.getSpec() != null && node.equals(ls.getSpec().getNode()) && ls.getMetadata().getDeletionTimestamp() == null) {
                String id = HandoffNames.idOf(ls.getSpec().getPool(), ls.getMetadata().getName());
                out.computeIfAbsent(ls.getSpec().getPool() + "/" + ls.getSpec().getSourceVolumeId(), k -> new ArrayList<>())
                        .add(named(byHandle.get(ls.getSpec().getDriver() + "/" + id), id));
            }
        }
        for (LoopGroupSnapshot g : s.groupSnapshots()) {
            if (g.getSpec() == null || !node.equals(g.getSpec().getNode()) || g.getStatus() == null || g.getStatus().getMembers() == null
                    || g.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            for (LoopGroupSnapshotStatus.Member m : g.getStatus().getMembers()) {
                out.computeIfAbsent(g.getSpec().getPool() + "/" + m.getSourceVolumeId(), k -> new ArrayList<>())
                        .add(named(byHandle.get(g.getSpec().getDriver() + "/" + m.getSnapshotId()), m.getSnapshotId()) + " of group "
                                + HandoffNames.idOf(g.getSpec().getPool(), g.getMetadata().getName()));
            }
        }
        out.values().forEach(l -> l.sort(null));
        return out;
    }

    private static String named(String volumeSnapshot, String id) {
        return volumeSnapshot == null ? id + " (no VolumeSnapshot names it)" : "VolumeSnapshot " + volumeSnapshot + " (" + id + ")";
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    private static Move item(ClusterState s, String node, LoopVolume v, Map<String, PersistentVolume> pvByHandle,
            Map<String, PersistentVolumeClaim> claims, Map<String, Long> planned) {
        String pool = v.getSpec().getPool();
        String id = HandoffNames.idOf(pool, v.getMetadata().getName());
        long bytes = v.getStatus() == null || v.getStatus().getCapacityBytes() == null ? 0 : v.getStatus().getCapacityBytes();
        String kind = v.getSpec().getMode() == VolumeMode.BLOCK ? "block" : Objects.toString(v.getSpec().getFsType(), "?");
        PersistentVolume pv = pvByHandle.get(v.getSpec().getDriver() + "/" + id);
        String pvName = pv == null ? null : pv.getMetadata().getName();
        String claimKey = pv == null || pv.getSpec().getClaimRef() == null ? null
                : pv.getSpec().getClaimRef().getNamespace() + "/" + pv.getSpec().getClaimRef().getName();
        if (v.getMetadata().getDeletionTimestamp() != null) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "it is being deleted");
        }
        if (!v.created()) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "it is not made yet (" + phase(v) + ")");
        }
        if (pv == null) {
            return Move.cannot(pool, id, null, null, bytes, kind, "no PersistentVolume names it (not made for a claim, or its PV was deleted)");
        }
        boolean annotated = pv.getMetadata().getAnnotations() != null && pv.getMetadata().getAnnotations().containsKey(MoveRecord.ANNOTATION);
        MoveRecord record = MoveRecord.of(pv);
        if (annotated && record == null) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "its PV's annotation " + MoveRecord.ANNOTATION + " cannot be read");
        }
        if (record != null) {
            if (!node.equals(record.from())) {
                return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "an evacuation of node " + record.from() + " is moving it");
            }
            PersistentVolumeClaim recorded = NewObjects.claimOf(record);
            String key = recorded.getMetadata().getNamespace() + "/" + recorded.getMetadata().getName();
            PersistentVolumeClaim now = claims.get(key);
            boolean oldClaim = now != null && pvName.equals(now.getSpec().getVolumeName()); // not yet replaced
            return new Move(pool, id, pvName, key, bytes, kind, record.to(), record.newPv(), oldClaim ? usedBy(s.pods(), now, pvName) : List.of(),
                    record.step(), null);
        }
        if (pv.getMetadata().getDeletionTimestamp() != null) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "its PV " + pvName + " is being deleted");
        }
        if (claimKey == null || !"Bound".equals(pv.getStatus() == null ? null : pv.getStatus().getPhase())) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "its PV " + pvName + " is not bound to a claim (phase "
                    + (pv.getStatus() == null ? "unknown" : pv.getStatus().getPhase()) + ")");
        }
        PersistentVolumeClaim claim = claims.get(claimKey);
        if (claim == null || !Objects.equals(claim.getMetadata().getUid(), pv.getSpec().getClaimRef().getUid())
                || !pvName.equals(claim.getSpec().getVolumeName())) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "the claim " + claimKey + " its PV names is not bound to it");
        }
        if (claim.getMetadata().getDeletionTimestamp() != null) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, "the claim is being deleted");
        }
        boolean thick = MutableParameters.parse("mutableParameters", v.getSpec().getMutableParameters() == null ? Map.of()
                : v.getSpec().getMutableParameters()).thick();
        List<String> why = new ArrayList<>();
        String scName = claim.getSpec().getStorageClassName() != null ? claim.getSpec().getStorageClassName() : pv.getSpec().getStorageClassName();
        StorageClass sc = scName == null ? null : s.storageClasses().stream().filter(c -> scName.equals(c.getMetadata().getName())).findFirst()
                .orElse(null);
        Map<String, String> selector = s.pools().stream().filter(p -> pool.equals(p.getMetadata().getName()) && p.getSpec() != null)
                .map(p -> p.getSpec().getNodeSelector()).findFirst().orElse(Map.of());
        String target = target(s, pool, node, bytes, thick, planned, why, sc, selector);
        if (target == null) {
            return Move.cannot(pool, id, pvName, claimKey, bytes, kind, why.isEmpty() ? "no other node serves pool " + pool
                    : "no other node of pool " + pool + " can take it: " + String.join("; ", why));
        }
        planned.merge(target, bytes, Long::sum);
        return new Move(pool, id, pvName, claimKey, bytes, kind, target, newPvName(pvName, node), usedBy(s.pods(), claim, pvName), null, null);
    }

    /**
     * The copy's PV and CSI request name: derived from the old PV and the node left, so that a run
     * that stopped makes the same one again; shaped as csi-provisioner's (pvc-UUID).
     */
    static String newPvName(String oldPv, String node) {
        return "pvc-" + UUID.nameUUIDFromBytes(("loopcsi-evacuate/" + oldPv + "/" + node).getBytes(StandardCharsets.UTF_8));
    }

    /** The node a new move goes to, or null with the reasons each candidate gave. */
    private static String target(ClusterState s, String pool, String node, long bytes, boolean thick, Map<String, Long> planned,
            List<String> why, StorageClass sc, Map<String, String> poolSelector) {
        List<LoopPoolNode> candidates = s.poolNodes().stream()
                .filter(n -> n.getSpec() != null && pool.equals(n.getSpec().getPool()) && !node.equals(n.getSpec().getNode()))
                .sorted(Comparator.comparingLong((LoopPoolNode n) -> -room(n, thick, planned)).thenComparing(n -> n.getSpec().getNode()))
                .toList();
        if (!serves(s.poolNodes().stream().filter(n -> n.getSpec() != null && pool.equals(n.getSpec().getPool())
                && node.equals(n.getSpec().getNode())).findFirst().orElse(null), s.now())) {
            why.add("node " + node + " itself does not serve pool " + pool + " now (its node pod must send the data)");
            return null;
        }
        for (LoopPoolNode n : candidates) {
            String name = n.getSpec().getNode();
            String inadmissible = TargetRules.whyNot(name, s.nodes().stream().filter(k -> name.equals(k.getMetadata().getName())).findFirst()
                    .orElse(null), sc, poolSelector);
            if (inadmissible != null) {
                why.add(name + ": " + inadmissible);
            } else if (!serves(n, s.now())) {
                why.add(name + ": not serving (last heartbeat " + (n.getStatus() == null ? "never" : n.getStatus().getHeartbeatTime()) + ")");
            } else if (n.getStatus().getTransferAddress() == null || n.getStatus().getTransferCertificateSha256() == null) {
                why.add(name + ": publishes no transfer endpoint");
            } else if (room(n, thick, planned) < bytes) {
                why.add(name + ": " + Sizes.format(Math.max(0, room(n, thick, planned))) + " available" + (thick ? " for thick volumes" : ""));
            } else {
                return name;
            }
        }
        return null;
    }

    private static long room(LoopPoolNode n, boolean thick, Map<String, Long> planned) {
        return n.getStatus() == null ? -1 : n.getStatus().available(thick) - planned.getOrDefault(n.getSpec().getNode(), 0L);
    }

    static boolean serves(LoopPoolNode n, Instant now) {
        if (n == null || n.getStatus() == null || n.getStatus().getHeartbeatTime() == null) {
            return false;
        }
        try {
            return Instant.parse(n.getStatus().getHeartbeatTime()).plus(STALE_AFTER).isAfter(now);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Pods that hold the claim now: scheduled to a node and not finished. The same rule as
     * kube-controller-manager's pvc-protection controller (podUsesPVC: a pod counts once it has a
     * node name, kubernetes pkg/controller/volume/pvcprotection): an unscheduled pod waits and
     * follows the claim wherever it is made again.
     */
    static List<String> usedBy(List<Pod> pods, PersistentVolumeClaim claim, String pvName) {
        if (claim == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (Pod p : pods) {
            if (!Objects.equals(p.getMetadata().getNamespace(), claim.getMetadata().getNamespace()) || p.getSpec() == null
                    || p.getSpec().getNodeName() == null || p.getSpec().getNodeName().isEmpty()) {
                continue;
            }
            String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
            if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
                continue;
            }
            boolean uses = p.getSpec().getVolumes() != null && p.getSpec().getVolumes().stream().anyMatch(vol -> vol.getPersistentVolumeClaim() != null
                    && claim.getMetadata().getName().equals(vol.getPersistentVolumeClaim().getClaimName()));
            if (uses) {
                out.add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName());
            }
        }
        return out.stream().sorted().toList();
    }

    private static String phase(LoopVolume v) {
        return v.getStatus() == null || v.getStatus().getPhase() == null ? "no answer from its node yet" : "phase " + v.getStatus().getPhase();
    }
}
