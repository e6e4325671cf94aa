package io.loopcsi.operator.dependents;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.operator.desired.ServiceMonitorSpec;

/** The pool's ServiceMonitor (its metrics Service scraped), written only where the ServiceMonitor CRD exists. */
public class ServiceMonitorApplier extends CrdGatedApplier {

    static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder()
            .withGroup(ServiceMonitorSpec.GROUP).withVersion(ServiceMonitorSpec.VERSION).withKind(ServiceMonitorSpec.KIND)
            .withPlural("servicemonitors").withNamespaced(true).build();

    public ServiceMonitorApplier() {
        super(CONTEXT, ServiceMonitorSpec.CRD, ServiceMonitorSpec::desired);
    }
}
