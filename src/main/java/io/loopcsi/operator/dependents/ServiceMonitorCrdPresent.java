package io.loopcsi.operator.dependents;

import java.util.concurrent.atomic.AtomicLong;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.operator.desired.ServiceMonitorSpec;

/**
 * Whether the monitoring.coreos.com ServiceMonitor CRD exists. Asked at most once a minute (the
 * CRD may be installed after the operator starts); an error counts as absent.
 */
class ServiceMonitorCrdPresent {

    private static final long RECHECK_MILLIS = 60_000;
    private final AtomicLong checkedAt = new AtomicLong(Long.MIN_VALUE / 2);
    private volatile boolean present;

    boolean isPresent(KubernetesClient client) {
        long now = System.currentTimeMillis();
        long last = checkedAt.get();
        if (now - last >= RECHECK_MILLIS && checkedAt.compareAndSet(last, now)) {
            try {
                present = client.apiextensions().v1().customResourceDefinitions().withName(ServiceMonitorSpec.CRD).get() != null;
            } catch (KubernetesClientException e) {
                present = false;
            }
        }
        return present;
    }
}
