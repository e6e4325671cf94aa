package io.loopcsi.operator.kube;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.engine.CreateRequest;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.engine.Placement;
import io.loopcsi.engine.VolumeMeta;
import io.loopcsi.engine.VolumeMode;

/**
 * A claim bound to a volume on a node as csi-provisioner leaves it: the claim (with the scheduler's
 * selected-node annotation), CreateVolume named after the PV through the controller's own code, the
 * PV with the claim's UID and the class' reclaim policy Delete, bound by kube-controller-manager.
 * The evacuation's tests and bench start from such claims.
 */
record ProvisionedClaim(PersistentVolumeClaim claim, String pv, VolumeMeta volume) {

    /**
     * size: the claim's request ("64Mi"), also the volume's size; block: the class' volumeMode
     * Block (else Filesystem xfs); labels and annotations: the user's own on the claim.
     */
    static ProvisionedClaim make(KubernetesClient admin, ApiVolumeProvider controller, String driver, String namespace, String name,
            String storageClass, boolean block, String size, boolean thick, String node, Map<String, String> labels,
            Map<String, String> annotations) {
        PersistentVolumeClaim pvc = admin.persistentVolumeClaims().inNamespace(namespace).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(name).addToLabels(labels).addToAnnotations(annotations)
                .addToAnnotations("volume.kubernetes.io/selected-node", node).endMetadata().withNewSpec().withStorageClassName(storageClass)
                .withAccessModes("ReadWriteOnce").withVolumeMode(block ? "Block" : "Filesystem").withNewResources()
                .addToRequests("storage", new Quantity(size)).endResources().endSpec().build()).create();
        String pvName = "pvc-" + pvc.getMetadata().getUid();
        long bytes = Quantity.getAmountInBytes(new Quantity(size)).longValueExact();
        VolumeMeta v = controller.createVolume(new CreateRequest(pvName, bytes, 0, block ? VolumeMode.BLOCK : VolumeMode.FILESYSTEM,
                block ? "" : "xfs", null, null, Map.of("csi.storage.k8s.io/pvc/name", name, "csi.storage.k8s.io/pvc/namespace", namespace,
                        "csi.storage.k8s.io/pv/name", pvName),
                thick ? MutableParameters.parse("p", Map.of("provisioning", "thick")) : MutableParameters.NONE),
                new Placement(List.of(node), List.of(node)));
        admin.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName)
                .addToAnnotations("pv.kubernetes.io/provisioned-by", driver).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity(Long.toString(v.capacityBytes()))))
                .withAccessModes("ReadWriteOnce").withPersistentVolumeReclaimPolicy("Delete").withStorageClassName(storageClass)
                .withVolumeMode(block ? "Block" : "Filesystem")
                .withNewClaimRef().withNamespace(namespace).withName(name).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .withNewCsi().withDriver(driver).withVolumeHandle(v.id()).withFsType(block ? null : "xfs")
                .addToVolumeAttributes("storage.kubernetes.io/csiProvisionerIdentity", "1-" + driver).endCsi()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey("topology.loopcsi.io/node")
                .withOperator("In").withValues(node).endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build()).create();
        TwoNodePool.await(name + " Bound", () -> "Bound".equals(admin.persistentVolumeClaims().inNamespace(namespace).withName(name).get()
                .getStatus().getPhase()));
        return new ProvisionedClaim(pvc, pvName, v);
    }
}
