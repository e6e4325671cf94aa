package io.loopcsi.operator.dependents;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.operator.desired.PrometheusRuleSpec;

/** The pool's PrometheusRule (its alerts), written only where the PrometheusRule CRD exists. */
public class PrometheusRuleApplier extends CrdGatedApplier {

    static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder()
            .withGroup(PrometheusRuleSpec.GROUP).withVersion(PrometheusRuleSpec.VERSION).withKind(PrometheusRuleSpec.KIND)
            .withPlural("prometheusrules").withNamespaced(true).build();

    public PrometheusRuleApplier() {
        super(CONTEXT, PrometheusRuleSpec.CRD, PrometheusRuleSpec::desired);
    }
}
