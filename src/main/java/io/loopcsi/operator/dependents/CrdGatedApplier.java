package io.loopcsi.operator.dependents;

import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.api.StoragePool;

/**
 * A pool's object of a kind another operator defines (the Prometheus Operator's ServiceMonitor,
 * PrometheusRule), written only where that kind's CRD exists: a missing CRD is not an error,
 * nothing is written then. Not a JOSDK dependent on purpose: JOSDK 5.1 builds an informer even to
 * deregister an inactive dependent (activation condition), which fails for a kind the server does
 * not serve, and QOSDK 7.2 cannot process a plain DependentResource of GenericKubernetesResource.
 * The reconciler calls it after the workflow; it applies server-side, and the owner reference
 * lets Kubernetes delete it with the pool.
 */
abstract class CrdGatedApplier {

    private final ResourceDefinitionContext context;
    private final CrdPresent crd;
    private final BiFunction<StoragePool, String, GenericKubernetesResource> desired;

    /** desired: the object's desired state from the pool and the operator's namespace (a pure function). */
    CrdGatedApplier(ResourceDefinitionContext context, String crdName, BiFunction<StoragePool, String, GenericKubernetesResource> desired) {
        this.context = context;
        this.crd = new CrdPresent(crdName);
        this.desired = desired;
    }

    /** Applies the pool's object if the CRD exists; returns it, or empty when there is no CRD. */
    public Optional<GenericKubernetesResource> reconcile(StoragePool pool, KubernetesClient client) {
        if (!crd.isPresent(client)) {
            return Optional.empty();
        }
        GenericKubernetesResource d = desired.apply(pool, OperatorSettings.namespace());
        d.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion(pool.getApiVersion())
                .withKind(pool.getKind()).withName(pool.getMetadata().getName()).withUid(pool.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(false).build()));
        try {
            return Optional.of(client.genericKubernetesResources(context).inNamespace(OperatorSettings.namespace())
                    .withName(d.getMetadata().getName())
                    .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("loopcsi-operator")
                            .withForce(true).build(), d));
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                crd.forget(); // the CRD went away: nothing to write any more
                return Optional.empty();
            }
            throw e;
        }
    }
}
