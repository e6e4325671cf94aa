package io.loopcsi.operator.dependents;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.operator.desired.ServiceMonitorSpec;

/**
 * Whether the monitoring.coreos.com ServiceMonitor CRD exists. Once seen it is remembered (until
 * {@link #forget()}, when an apply finds it gone); while absent it is asked again at each
 * reconcile, so a Prometheus Operator installed later is picked up. An error counts as absent.
 */
class ServiceMonitorCrdPresent {

    private volatile boolean present;

    boolean isPresent(KubernetesClient client) {
        if (!present) {
            try {
                present = client.apiextensions().v1().customResourceDefinitions().withName(ServiceMonitorSpec.CRD).get() != null;
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
