package io.loopcsi.operator.dependents;

import java.util.concurrent.atomic.AtomicLong;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.ServiceMonitorSpec;

/**
 * Activation condition of the ServiceMonitor: the monitoring.coreos.com CRD exists. Checked at
 * most once a minute (a CRD may be installed after the operator starts); a missing CRD is not
 * an error, the dependent simply stays inactive.
 */
public class ServiceMonitorCrdPresent implements Condition<GenericKubernetesResource, StoragePool> {

    private static final long RECHECK_MILLIS = 60_000;
    private final AtomicLong checkedAt = new AtomicLong(Long.MIN_VALUE / 2);
    private volatile boolean present;

    @Override
    public boolean isMet(DependentResource<GenericKubernetesResource, StoragePool> dependent, StoragePool pool, Context<StoragePool> context) {
        long now = System.currentTimeMillis();
        long last = checkedAt.get();
        if (now - last >= RECHECK_MILLIS && checkedAt.compareAndSet(last, now)) {
            try {
                present = context.getClient().apiextensions().v1().customResourceDefinitions().withName(ServiceMonitorSpec.CRD).get() != null;
            } catch (KubernetesClientException e) {
                present = false;
            }
        }
        return present;
    }
}
