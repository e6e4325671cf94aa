package io.loopcsi.operator.dependents;

import java.util.Optional;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PrometheusRuleSpec;

/**
 * The pool's PrometheusRule (its alerts), written only where the Prometheus Operator's
 * PrometheusRule CRD exists; otherwise exactly like {@link ServiceMonitorApplier} (and not a
 * JOSDK dependent for the same reasons).
 */
public class PrometheusRuleApplier {

    static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder()
            .withGroup(PrometheusRuleSpec.GROUP).withVersion(PrometheusRuleSpec.VERSION).withKind(PrometheusRuleSpec.KIND)
            .withPlural("prometheusrules").withNamespaced(true).build();

    private final CrdPresent crd = new CrdPresent(PrometheusRuleSpec.CRD);

    /** Applies the pool's PrometheusRule if the CRD exists; returns it, or empty when there is no CRD. */
    public Optional<GenericKubernetesResource> reconcile(StoragePool pool, KubernetesClient client) {
        if (!crd.isPresent(client)) {
            return Optional.empty();
        }
        GenericKubernetesResource desired = PrometheusRuleSpec.desired(pool, OperatorSettings.namespace());
        desired.getMetadata().setOwnerReferences(java.util.List.of(new OwnerReferenceBuilder().withApiVersion(pool.getApiVersion())
                .withKind(pool.getKind()).withName(pool.getMetadata().getName()).withUid(pool.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(false).build()));
        try {
            GenericKubernetesResource applied = resource(client, desired.getMetadata().getName())
                    .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("loopcsi-operator")
                            .withForce(true).build(), desired);
            return Optional.of(applied);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                crd.forget(); // the CRD went away: nothing to write any more
                return Optional.empty();
            }
            throw e;
        }
    }

    private static io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource> resource(KubernetesClient client, String name) {
        return client.genericKubernetesResources(CONTEXT).inNamespace(OperatorSettings.namespace()).withName(name);
    }
}
