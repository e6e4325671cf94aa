package io.loopcsi.operator.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;

class NodePodAdmissionTest {

    /** As the DaemonSet controller of Kubernetes 1.25+ words a Pod Security refusal (pkg/controller/daemon, FailedCreate). */
    static final String PSA = "Error creating: pods \"loopcsi-local-node-x2k9f\" is forbidden: violates PodSecurity \"restricted:latest\":"
            + " privileged (container \"loopcsi\" must not set securityContext.privileged=true), restricted volume types"
            + " (volumes \"registration-dir\", \"data\" use restricted volume type \"hostPath\")";
    static final String QUOTA = "Error creating: pods \"loopcsi-local-node-7hx2q\" is forbidden: exceeded quota: no-pods,"
            + " requested: pods=1, used: pods=0, limited: pods=0";

    static final java.time.Instant NOW = java.time.Instant.parse("2026-12-05T10:01:00Z");

    static DaemonSet nodes(int desired, int scheduled) {
        return new DaemonSetBuilder().withNewMetadata().withName("loopcsi-local-node").withNamespace("loopcsi-system").endMetadata()
                .withNewStatus().withDesiredNumberScheduled(desired).withCurrentNumberScheduled(scheduled).withNumberMisscheduled(0)
                .withNumberReady(0).endStatus().build();
    }

    static Event event(String reason, String message, String at) {
        return new EventBuilder().withNewMetadata().withName(reason + at).endMetadata().withReason(reason).withMessage(message)
                .withLastTimestamp(at).build();
    }

    static Namespace ns(Map<String, String> labels) {
        return new NamespaceBuilder().withNewMetadata().withName("loopcsi-system").withLabels(labels).endMetadata().build();
    }

    @Test
    void aPodSecurityRefusalNamesTheLevelAndTheFix() {
        String r = NodePodAdmission.refusal(nodes(2, 0), List.of(event("FailedCreate", PSA, "2026-12-05T10:00:00Z")),
                ns(Map.of(NodePodAdmission.ENFORCE_LABEL, "restricted")), NOW).orElseThrow();
        assertTrue(r.startsWith("node pods of DaemonSet loopcsi-system/loopcsi-local-node refused admission (2 of 2 missing): pods "), r);
        assertTrue(r.contains("violates PodSecurity \"restricted:latest\""), r);
        assertTrue(r.contains("namespace loopcsi-system enforces Pod Security level 'restricted' and the node pods need 'privileged'"), r);
        assertTrue(r.endsWith("kubectl label namespace loopcsi-system pod-security.kubernetes.io/enforce=privileged --overwrite"), r);
    }

    @Test
    void aClusterDefaultLevelIsNamedWhenTheNamespaceHasNoLabel() {
        String r = NodePodAdmission.refusal(nodes(1, 0), List.of(event("FailedCreate", PSA, "2026-12-05T10:00:00Z")), ns(Map.of()), NOW)
                .orElseThrow();
        assertTrue(r.contains("has no pod-security.kubernetes.io/enforce label, so the cluster's default level applies"), r);
    }

    @Test
    void anotherRefusalIsReportedAsTheServerSaidIt() {
        String r = NodePodAdmission.refusal(nodes(1, 0), List.of(event("FailedCreate", QUOTA, "2026-12-05T10:00:00Z")),
                ns(Map.of(NodePodAdmission.ENFORCE_LABEL, "privileged")), NOW).orElseThrow();
        assertTrue(r.endsWith("(1 of 1 missing): pods \"loopcsi-local-node-7hx2q\" is forbidden: exceeded quota: no-pods,"
                + " requested: pods=1, used: pods=0, limited: pods=0"), r);
    }

    @Test
    void nothingIsReportedOnceThePodsExistOrALaterCreateSucceeded() {
        var failed = event("FailedCreate", QUOTA, "2026-12-05T10:00:00Z");
        assertTrue(NodePodAdmission.refusal(nodes(2, 2), List.of(failed), null, NOW).isEmpty(), "every node has its pod");
        assertTrue(NodePodAdmission.refusal(nodes(2, 1), List.of(failed, event("SuccessfulCreate", "Created pod: x", "2026-12-05T10:00:05Z")),
                null, NOW).isEmpty(), "a later create went through: the missing pod is on its way");
        assertEquals(1, NodePodAdmission.refusal(nodes(2, 1), List.of(event("SuccessfulCreate", "Created pod: x", "2026-12-05T09:00:00Z"),
                failed), null, NOW).stream().count(), "a create refused after an earlier success is reported");
        assertTrue(NodePodAdmission.refusal(nodes(1, 0), List.of(), null, NOW).isEmpty(), "no Event: pending, not refused");
        assertTrue(NodePodAdmission.refusal(null, List.of(failed), null, NOW).isEmpty());
        assertTrue(NodePodAdmission.refusal(nodes(1, 0), List.of(failed), null, NOW.plus(NodePodAdmission.CURRENT)).isEmpty(),
                "a refusal the DaemonSet controller stopped retrying long ago is over");
    }

    @Test
    void aDaemonSetWhoseEveryCreateWasRefusedStillShowsNoneDesiredAndIsReported() {
        // the DaemonSet controller returns at the failed create without writing its status (seen on 1.20)
        String r = NodePodAdmission.refusal(nodes(0, 0), List.of(event("FailedCreate", "(combined from similar events): " + QUOTA,
                "2026-12-05T10:00:00Z")), null, NOW).orElseThrow();
        assertTrue(r.endsWith("refused admission (0 created): pods \"loopcsi-local-node-7hx2q\" is forbidden: exceeded quota: no-pods,"
                + " requested: pods=1, used: pods=0, limited: pods=0"), r);
    }
}
