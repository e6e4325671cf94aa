package io.loopcsi.cli.evacuate;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * The objects a move writes, built by pure functions: the claim as recorded before it is deleted,
 * the new PersistentVolume as csi-provisioner would have written it for the copy, and the claim
 * made again, bound ahead to that PV.
 */
public final class NewObjects {

    /** The topology key of every pool's driver (csi.CsiTypes.TOPOLOGY_KEY). */
    static final String TOPOLOGY_KEY = "topology.loopcsi.io/node";

    /**
     * Annotations of a claim that belong to its binding or provisioning, set by kube-controller-manager,
     * the scheduler or csi-provisioner: the claim made again gets them from those (or, pre-bound, needs
     * none); every other annotation is the user's and is kept.
     */
    static final Set<String> BINDING_ANNOTATIONS = Set.of("pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller",
            "volume.kubernetes.io/selected-node", "volume.beta.kubernetes.io/storage-provisioner", "volume.kubernetes.io/storage-provisioner",
            "volume.kubernetes.io/storage-resizer");

    /**
     * The annotation on a claim made again: the node its volume moved from. Written once the PV
     * controller has bound the new PV to the claim (see {@link #pvBoundTo}), not at creation: writing it
     * then also makes the PV controller sync the claim again (kubernetes/kubernetes#85659, open since
     * 1.16 and still in 1.31: the PV controller's claim worker and volume worker both set the pre-bound
     * PV's phase; the one that loses the conflict drops the claim's half of the binding until the
     * periodic resync, 15 s by default, so the claim stays Pending while its PV is Bound).
     */
    static final String MOVED_FROM = "loopcsi.io/moved-from";

    private NewObjects() {
    }

    /** The claim as it is, reduced to what the one made again keeps: name, labels, annotations, owners, spec; as JSON. */
    static String recordOf(PersistentVolumeClaim c) {
        PersistentVolumeClaim r = new PersistentVolumeClaim();
        ObjectMeta m = new ObjectMeta();
        m.setName(c.getMetadata().getName());
        m.setNamespace(c.getMetadata().getNamespace());
        m.setUid(c.getMetadata().getUid()); // which claim the move started from
        m.setLabels(c.getMetadata().getLabels());
        m.setAnnotations(c.getMetadata().getAnnotations());
        m.setOwnerReferences(c.getMetadata().getOwnerReferences());
        r.setMetadata(m);
        r.setSpec(c.getSpec());
        return Serialization.asJson(r);
    }

    static PersistentVolumeClaim claimOf(MoveRecord record) {
        return Serialization.unmarshal(record.claim(), PersistentVolumeClaim.class);
    }

    /**
     * The claim made again: the recorded name, labels, user annotations, owner references and spec
     * (access modes, size request, class, mode, selector), bound ahead to the new PV (spec.volumeName):
     * kube-controller-manager's PV controller completes the binding of a claim that names its volume.
     * A dataSource is dropped: the content comes from the old volume, not from it again.
     */
    static PersistentVolumeClaim claimAgain(MoveRecord record) {
        PersistentVolumeClaim was = claimOf(record);
        PersistentVolumeClaim c = new PersistentVolumeClaim();
        ObjectMeta m = new ObjectMeta();
        m.setName(was.getMetadata().getName());
        m.setNamespace(was.getMetadata().getNamespace());
        m.setLabels(was.getMetadata().getLabels());
        Map<String, String> annotations = new LinkedHashMap<>();
        if (was.getMetadata().getAnnotations() != null) {
            was.getMetadata().getAnnotations().forEach((k, v) -> {
                if (!BINDING_ANNOTATIONS.contains(k) && !MOVED_FROM.equals(k)) { // MOVED_FROM: written after the binding
                    annotations.put(k, v);
                }
            });
        }
        m.setAnnotations(annotations);
        m.setOwnerReferences(was.getMetadata().getOwnerReferences());
        c.setMetadata(m);
        c.setSpec(was.getSpec());
        c.getSpec().setVolumeName(record.newPv());
        c.getSpec().setDataSource(null);
        c.getSpec().setDataSourceRef(null);
        return c;
    }

    /**
     * The PV of the copy, as csi-provisioner writes one for a volume it made
     * (kubernetes-csi/external-provisioner pkg/controller/controller.go, csiProvisioner.Provision;
     * the claimRef, storageClassName and the annotation pv.kubernetes.io/provisioned-by are written by
     * sig-storage-lib-external-provisioner's ProvisionController): named after the CSI request, access
     * modes and volume mode of the claim, capacity as the driver answered, the class' mount options
     * and reclaim policy, csi.driver/volumeHandle, volumeAttributes with the provisioner's identity
     * (the old PV's: no other is known here), fsType unless block, the secret references the old PV
     * had, node affinity from the volume's accessible topology (the target node), the deletion-secret
     * annotations. The claimRef names the claim without a UID: the claim is made again after it, and
     * the PV controller fills the UID in when it binds the two.
     */
    static PersistentVolume pv(PersistentVolume old, MoveRecord record, String volumeId, long capacityBytes, StorageClass sc) {
        PersistentVolumeClaim claim = claimOf(record);
        Map<String, String> annotations = new HashMap<>();
        annotations.put("pv.kubernetes.io/provisioned-by", old.getSpec().getCsi().getDriver());
        Map<String, String> oldAnn = old.getMetadata().getAnnotations() == null ? Map.of() : old.getMetadata().getAnnotations();
        for (String k : List.of("volume.kubernetes.io/provisioner-deletion-secret-name", "volume.kubernetes.io/provisioner-deletion-secret-namespace")) {
            annotations.put(k, oldAnn.getOrDefault(k, ""));
        }
        String reclaim = sc != null && sc.getReclaimPolicy() != null ? sc.getReclaimPolicy() : record.reclaimPolicy();
        var oldCsi = old.getSpec().getCsi();
        boolean block = "Block".equals(claim.getSpec().getVolumeMode());
        return new PersistentVolumeBuilder().withNewMetadata().withName(record.newPv()).withAnnotations(annotations).endMetadata()
                .withNewSpec()
                .withAccessModes(claim.getSpec().getAccessModes())
                .withMountOptions(sc != null ? sc.getMountOptions() : old.getSpec().getMountOptions())
                .withCapacity(Map.of("storage", new Quantity(Long.toString(capacityBytes))))
                .withPersistentVolumeReclaimPolicy(reclaim)
                .withStorageClassName(old.getSpec().getStorageClassName())
                .withVolumeMode(claim.getSpec().getVolumeMode())
                .withNewClaimRef().withApiVersion("v1").withKind("PersistentVolumeClaim").withNamespace(claim.getMetadata().getNamespace())
                .withName(claim.getMetadata().getName()).endClaimRef()
                .withNewCsi().withDriver(oldCsi.getDriver()).withVolumeHandle(volumeId)
                .withVolumeAttributes(oldCsi.getVolumeAttributes() == null ? Map.of() : oldCsi.getVolumeAttributes())
                .withFsType(block ? null : oldCsi.getFsType()).withReadOnly(oldCsi.getReadOnly())
                .withControllerPublishSecretRef(oldCsi.getControllerPublishSecretRef()).withNodeStageSecretRef(oldCsi.getNodeStageSecretRef())
                .withNodePublishSecretRef(oldCsi.getNodePublishSecretRef()).withControllerExpandSecretRef(oldCsi.getControllerExpandSecretRef())
                .endCsi()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey(TOPOLOGY_KEY)
                .withOperator("In").withValues(record.to()).endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build();
    }

    /**
     * Whether the PV controller has done the PV's half of binding this claim: the PV's claimRef has the
     * claim's UID (the PV made by {@link #pv} names the claim without one).
     */
    static boolean pvBoundTo(PersistentVolume pv, PersistentVolumeClaim claim) {
        return pv != null && claim != null && pv.getSpec().getClaimRef() != null && claim.getMetadata().getUid() != null
                && claim.getMetadata().getUid().equals(pv.getSpec().getClaimRef().getUid());
    }
}
