package io.loopcsi.controller;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.Sizes;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.handoff.LoopVolumeStatus;
import io.loopcsi.handoff.Phase;
import io.loopcsi.handoff.TransferProgress;

/**
 * core/v1 Events on the PersistentVolumeClaim of a volume made from another node's content (what
 * {@code kubectl describe pvc} shows): TransferStarted when the controller writes the intent,
 * TransferFinished or TransferFailed when the node answers (bytes, duration and rate from the
 * node's status.transfer). The claim is known from the CreateVolume parameters csi-provisioner adds
 * with --extra-create-metadata (kubernetes-csi/external-provisioner pkg/controller/controller.go:
 * pvcNameKey "csi.storage.k8s.io/pvc/name", pvcNamespaceKey "csi.storage.k8s.io/pvc/namespace";
 * the operator's ControllerDeployment passes the flag). Without them (a CSI client other than the
 * sidecar) there is no claim and no Event. A failure to record is logged, never fatal.
 */
final class TransferEvents {

    static final String PVC_NAME = "csi.storage.k8s.io/pvc/name";
    static final String PVC_NAMESPACE = "csi.storage.k8s.io/pvc/namespace";
    static final String COMPONENT = "loopcsi-controller";

    private static final Logger LOG = Logger.getLogger(TransferEvents.class);

    /** The claim a volume is made for. */
    record Claim(String namespace, String name) {
    }

    /** One Event: Normal or Warning, its reason and message. */
    record Note(String type, String reason, String message) {
    }

    private final KubernetesClient client;

    TransferEvents(KubernetesClient client) {
        this.client = client;
    }

    static Optional<Claim> claim(Map<String, String> parameters) {
        if (parameters == null) {
            return Optional.empty();
        }
        String name = parameters.get(PVC_NAME);
        String ns = parameters.get(PVC_NAMESPACE);
        return name == null || name.isBlank() || ns == null || ns.isBlank() ? Optional.empty() : Optional.of(new Claim(ns, name));
    }

    static Note started(String volumeId, String sourceId, String sourceNode, String node, long sizeBytes) {
        return new Note("Normal", "TransferStarted", "volume " + volumeId + " on node " + node + ": fetching " + sourceId + " ("
                + Sizes.format(sizeBytes) + ") from node " + sourceNode);
    }

    /** What the node's answer says of the transfer; empty when it is no answer of a transfer. */
    static Optional<Note> ended(LoopVolume lv) {
        LoopVolumeStatus s = lv.getStatus();
        if (s == null || lv.getSpec() == null || lv.getSpec().getTransferId() == null) {
            return Optional.empty();
        }
        TransferProgress t = s.getTransfer();
        String from = lv.getSpec().getSourceNode();
        String on = " of volume " + lv.getSpec().getName() + " from node " + from + " to node " + lv.getSpec().getNode();
        if (Phase.READY.equals(s.getPhase()) && t != null && TransferProgress.DONE.equals(t.getPhase())) {
            return Optional.of(new Note("Normal", "TransferFinished", "transfer" + on + ": " + Sizes.format(nz(t.getBytesDone()))
                    + " of data in " + seconds(t) + " s (" + Sizes.format(nz(t.getBytesPerSecond())) + "/s)"));
        }
        if (Phase.FAILED.equals(s.getPhase())) {
            String why = t != null && t.getReason() != null ? t.getReason() : s.getCode() + ": " + s.getMessage();
            return Optional.of(new Note("Warning", "TransferFailed", "transfer" + on + " failed"
                    + (t != null ? " after " + Sizes.format(nz(t.getBytesDone())) + " of " + Sizes.format(nz(t.getBytesTotal())) : "")
                    + ": " + why));
        }
        return Optional.empty();
    }

    private static long nz(Long l) {
        return l == null ? 0 : l;
    }

    private static long seconds(TransferProgress t) {
        try {
            return Math.max(0, Instant.parse(t.getUpdatedAt()).getEpochSecond() - Instant.parse(t.getStartedAt()).getEpochSecond());
        } catch (RuntimeException e) {
            return 0;
        }
    }

    void record(Map<String, String> parameters, Note note) {
        Optional<Claim> c = claim(parameters);
        if (c.isEmpty()) {
            return;
        }
        Claim claim = c.get();
        try {
            PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(claim.namespace()).withName(claim.name()).get();
            String now = Instant.now().toString();
            var e = new EventBuilder()
                    .withNewMetadata().withName(claim.name() + "." + UUID.randomUUID().toString().replace("-", "").substring(0, 16))
                    .withNamespace(claim.namespace()).endMetadata()
                    .withNewInvolvedObject().withApiVersion("v1").withKind("PersistentVolumeClaim").withNamespace(claim.namespace())
                    .withName(claim.name()).withUid(pvc == null ? null : pvc.getMetadata().getUid())
                    .withResourceVersion(pvc == null ? null : pvc.getMetadata().getResourceVersion()).endInvolvedObject()
                    .withType(note.type()).withReason(note.reason()).withMessage(note.message())
                    .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                    .withNewSource().withComponent(COMPONENT).endSource()
                    .build();
            client.v1().events().inNamespace(claim.namespace()).resource(e).create();
        } catch (RuntimeException ex) {
            LOG.warnf("cannot record event %s on PersistentVolumeClaim %s/%s: %s", note.reason(), claim.namespace(), claim.name(),
                    ex.getMessage());
        }
    }
}
