package io.loopcsi.operator.manifests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Kubernetes lets the operator grant only what it holds itself (RBAC escalation prevention, no
 * "escalate" verb given to it): its generated ClusterRole must cover every rule of CsiRbac.
 */
class OperatorRbacTest {

    @Test
    void theOperatorHoldsEveryRuleItGrantsToAPoolsComponents() throws IOException {
        List<String> missing = RbacCoverage.missing(RbacCoverage.operatorRules(), RbacCoverage.grantedToPools());
        assertTrue(missing.isEmpty(), "add @RBACRule for these to StoragePoolReconciler, then `make manifests`: " + missing);
    }
}
