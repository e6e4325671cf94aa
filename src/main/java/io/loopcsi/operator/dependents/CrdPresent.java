package io.loopcsi.operator.dependents;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Whether an optional CRD (the Prometheus Operator's ServiceMonitor, PrometheusRule) exists. Once seen it is remembered (until
 * {@link #forget()}, when an apply finds it gone); while absent it is asked again at each
 * reconcile, so a Prometheus Operator installed later is picked up. An error counts as absent.
 */
class CrdPresent {

    private final String crd;
    private volatile boolean present;

    CrdPresent(String crd) {
        this.crd = crd;
    }

    boolean isPresent(KubernetesClient client) {
        if (!present) {
            try {
                present = client.apiextensions().v1().customResourceDefinitions().withName(crd).get() != null;
            } catch (KubernetesClientException e) {
                present = false;
            }
        }
        return present;
    }

    void forget() {
        present = false;
    }
}
