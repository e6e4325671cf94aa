package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.rbac.PolicyRule;

class CsiRbacTest {

    @Test
    void bindingsTieEachComponentsRoleToItsServiceAccount() {
        var p = Pools.minimal("p1");
        var crb = CsiRbac.clusterRoleBinding(p, "ns", CsiRbac.CONTROLLER);
        assertEquals("loopcsi-p1-controller", crb.getRoleRef().getName());
        assertEquals("ClusterRole", crb.getRoleRef().getKind());
        assertEquals("loopcsi-p1-controller", crb.getSubjects().get(0).getName());
        assertEquals("ns", crb.getSubjects().get(0).getNamespace());
        var rb = CsiRbac.controllerRoleBinding(p, "ns");
        assertEquals("Role", rb.getRoleRef().getKind());
        assertEquals("ns", rb.getMetadata().getNamespace());
        assertEquals("loopcsi-p1-node", CsiRbac.serviceAccount(p, "ns", CsiRbac.NODE).getMetadata().getName());
    }

    @Test
    void nodeComponentsGetNoWriteAccessToVolumesAndNoWildcards() {
        var node = CsiRbac.clusterRole(Pools.minimal("p1"), CsiRbac.NODE);
        for (PolicyRule r : node.getRules()) {
            assertTrue(!r.getResources().contains("persistentvolumes"), "node role must not touch PVs");
        }
        for (var rules : java.util.List.of(CsiRbac.CONTROLLER_CLUSTER_RULES, CsiRbac.CONTROLLER_NAMESPACE_RULES, CsiRbac.NODE_CLUSTER_RULES)) {
            for (PolicyRule r : rules) {
                assertTrue(!r.getVerbs().contains("*") && !r.getResources().contains("*") && !r.getApiGroups().contains("*"), r.toString());
            }
        }
    }

    @Test
    void leaderElectionAndCapacityObjectsAreNamespaced() {
        var role = CsiRbac.controllerRole(Pools.minimal("p1"), "ns");
        assertTrue(role.getRules().stream().anyMatch(r -> r.getResources().contains("leases")));
        assertTrue(role.getRules().stream().anyMatch(r -> r.getResources().contains("csistoragecapacities")));
        assertTrue(CsiRbac.CONTROLLER_CLUSTER_RULES.stream().noneMatch(r -> r.getResources().contains("leases")));
    }

    @Test
    void onOpenShiftOnlyTheNodeMayUseThePrivilegedScc() {
        var p = Pools.minimal("p1");
        ClusterInfo openShift = new ClusterInfo(true, true, true, 34, true);
        var node = CsiRbac.clusterRole(p, CsiRbac.NODE, openShift);
        var scc = node.getRules().stream().filter(r -> r.getApiGroups().contains("security.openshift.io")).toList();
        assertEquals(1, scc.size(), node.getRules().toString());
        assertEquals(java.util.List.of("securitycontextconstraints"), scc.get(0).getResources());
        assertEquals(java.util.List.of("privileged"), scc.get(0).getResourceNames());
        assertEquals(java.util.List.of("use"), scc.get(0).getVerbs());
        assertTrue(CsiRbac.clusterRole(p, CsiRbac.CONTROLLER, openShift).getRules().stream()
                .noneMatch(r -> r.getApiGroups().contains("security.openshift.io")), "the controller pod is not privileged");
        assertTrue(CsiRbac.clusterRole(p, CsiRbac.NODE, ClusterInfo.CURRENT).getRules().stream()
                .noneMatch(r -> r.getApiGroups().contains("security.openshift.io")), "no SCC rule where SCCs are not served");
    }
}
