package io.loopcsi.operator.kube;

import static io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.status.Conditions;
import io.loopcsi.operator.status.NodePodAdmission;

/**
 * Node pods the API server refuses to admit are reported in the pool's status, on a real API
 * server with its real DaemonSet controller (kube-testenv). Kubernetes 1.20 has no Pod Security
 * admission, so a ResourceQuota of zero pods refuses them here: the same FailedCreate path a
 * Pod Security refusal takes (the DaemonSet controller's Event), and the namespace's
 * pod-security.kubernetes.io/enforce label, set to restricted for the test, is named with its fix.
 * The operator runs in this JVM as its ServiceAccount.
 */
class NodePodsRefusedKubeTest {

    static final String NS = "loopcsi-system";
    static final String POOL = "refused";
    static final String NODE = "refused-node";
    static final String QUOTA = "loopcsi-test-no-pods";

    static KubernetesClient admin;
    static Operator operator;
    static String levelBefore;

    @BeforeAll
    static void start() {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED NodePodsRefusedKubeTest: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); `make test-kube`");
        }
        assumeTrue(configured, "no test cluster");
        // server-side, as the OLM recipe's later `kubectl apply --server-side -f kubernetes/crds/` (OlmBundleKubeTest):
        // a client-side apply first would own the CRDs' fields under another manager and make that one conflict
        Kubectl.ok("apply", "--server-side", "--force-conflicts", "-k", "kubernetes/");
        admin = new KubernetesClientBuilder().build();
        await("CRD established", () -> admin.apiextensions().v1().customResourceDefinitions().withName("storagepools.loopcsi.io").get()
                .getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername("system:serviceaccount:" + NS + ":loopcsi-operator");
        KubernetesClient asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        operator = new Operator(o -> o.withKubernetesClient(asOperator));
        operator.register(new StoragePoolReconciler());
        operator.start();
    }

    @AfterAll
    static void cleanUp() {
        if (admin == null) {
            return;
        }
        admin.resourceQuotas().inNamespace(NS).withName(QUOTA).delete();
        Kubectl.run("delete", "storagepool", POOL, "--ignore-not-found", "--wait=true", "--timeout=60s");
        admin.nodes().withName(NODE).delete();
        if (levelBefore != null) {
            Kubectl.run("label", "namespace", NS, NodePodAdmission.ENFORCE_LABEL + "=" + levelBefore, "--overwrite");
        }
        if (operator != null) {
            operator.stop();
        }
        admin.close();
    }

    @Test
    void refusedNodePodsAreReportedWithTheServersWordsAndTheNamespacesLevelThenClear() {
        levelBefore = admin.namespaces().withName(NS).get().getMetadata().getLabels().get(NodePodAdmission.ENFORCE_LABEL);
        assertEquals("privileged", levelBefore, "kubernetes/namespace.yaml admits the node pods where Pod Security is enforced");
        Kubectl.ok("label", "namespace", NS, NodePodAdmission.ENFORCE_LABEL + "=restricted", "--overwrite");
        admin.resourceQuotas().inNamespace(NS).resource(new ResourceQuotaBuilder().withNewMetadata().withName(QUOTA).endMetadata()
                .withNewSpec().withHard(Map.of("pods", new Quantity("0"))).endSpec().build()).create();
        await("the quota controller has counted the namespace",
                () -> admin.resourceQuotas().inNamespace(NS).withName(QUOTA).get().getStatus().getUsed() != null);
        // a Node object: the DaemonSet controller tries a pod for it at once (its status does not matter for the
        // attempt; a status written here would race the node lifecycle controller's own writes)
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).addToLabels("kubernetes.io/hostname", NODE).endMetadata()
                .build()).create();
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: refused}
                spec:
                  capacityPerNode: 1Gi
                  nodeSelector: {kubernetes.io/hostname: refused-node}
                """);

        Condition degraded = await("the pool reports the refusal", Duration.ofSeconds(120), () -> Conditions
                .find(pool().getStatus() == null ? null : pool().getStatus().getConditions(), Conditions.DEGRADED)
                .filter(c -> NodePodAdmission.REASON.equals(c.getReason())).orElse(null));
        assertEquals("True", degraded.getStatus());
        String m = degraded.getMessage();
        assertTrue(m.startsWith("node pods of DaemonSet loopcsi-system/loopcsi-refused-node refused admission ("), m);
        assertTrue(m.contains("is forbidden: exceeded quota: " + QUOTA), "the API server's own words: " + m);
        assertTrue(m.endsWith("namespace loopcsi-system enforces Pod Security level 'restricted' and the node pods need 'privileged': "
                + "kubectl label namespace loopcsi-system pod-security.kubernetes.io/enforce=privileged --overwrite"), m);
        Condition ready = Conditions.find(pool().getStatus().getConditions(), Conditions.READY).orElseThrow();
        assertEquals("False", ready.getStatus());
        assertEquals(NodePodAdmission.REASON, ready.getReason());

        // Its clearing (a later SuccessfulCreate) is NodePodAdmissionTest's: the DaemonSet controller retries a refused
        // create only on its work queue's backoff, minutes apart once it has failed a few times.
    }

    static StoragePool pool() {
        return admin.resources(StoragePool.class).withName(POOL).get();
    }
}
