package io.loopcsi.operator.desired;

import java.util.List;

import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * ServiceAccounts and RBAC of a pool's CSI components, least privilege for each: the rules the
 * sidecars document (csi-provisioner, csi-resizer, csi-snapshotter deploy/kubernetes/rbac.yaml)
 * plus what loopcsi's own roles need. The operator must itself hold every rule it grants (RBAC
 * escalation prevention); a unit test checks that its generated ClusterRole covers these.
 */
public final class CsiRbac {

    public static final String CONTROLLER = "controller";
    public static final String NODE = "node";

    /** Cluster-wide rules of the controller Deployment (provisioner + resizer + snapshotter + loopcsi controller). */
    public static final List<PolicyRule> CONTROLLER_CLUSTER_RULES = List.of(
            rule("", "persistentvolumes", "get", "list", "watch", "create", "delete", "patch"),
            rule("", "persistentvolumeclaims", "get", "list", "watch", "update", "patch"),
            rule("", "persistentvolumeclaims/status", "patch"),
            rule("", "events", "get", "list", "watch", "create", "update", "patch"),
            rule("", "nodes", "get", "list", "watch"),
            rule("", "pods", "get", "list", "watch"),
            rule("storage.k8s.io", "storageclasses", "get", "list", "watch"),
            rule("storage.k8s.io", "csinodes", "get", "list", "watch"),
            rule("storage.k8s.io", "volumeattachments", "get", "list", "watch"),
            // csi-provisioner and csi-resizer with VolumeAttributesClass on (external-resizer deploy/kubernetes/rbac.yaml, v1.10+)
            rule("storage.k8s.io", "volumeattributesclasses", "get", "list", "watch"),
            rule("snapshot.storage.k8s.io", "volumesnapshotclasses", "get", "list", "watch"),
            rule("snapshot.storage.k8s.io", "volumesnapshots", "get", "list", "watch", "update", "patch"),
            rule("snapshot.storage.k8s.io", "volumesnapshotcontents", "get", "list", "watch", "create", "update", "delete", "patch"),
            rule("snapshot.storage.k8s.io", "volumesnapshotcontents/status", "update", "patch"),
            rule("groupsnapshot.storage.k8s.io", "volumegroupsnapshotclasses", "get", "list", "watch"),
            rule("groupsnapshot.storage.k8s.io", "volumegroupsnapshotcontents", "get", "list", "watch", "update", "patch"),
            rule("groupsnapshot.storage.k8s.io", "volumegroupsnapshotcontents/status", "update", "patch"),
            // loopcsi controller: writes the hand-off objects, reads the nodes' capacity
            rule("loopcsi.io", "loopvolumes", "get", "list", "watch", "create", "update", "patch", "delete"),
            rule("loopcsi.io", "loopsnapshots", "get", "list", "watch", "create", "update", "patch", "delete"),
            rule("loopcsi.io", "loopgroupsnapshots", "get", "list", "watch", "create", "update", "patch", "delete"),
            rule("loopcsi.io", "looppoolnodes", "get", "list", "watch"),
            // the authorisation of a transfer between nodes (issue 35), written before the intent that needs it
            rule("loopcsi.io", "looptransfers", "get", "list", "watch", "create", "update", "patch", "delete"));

    /** Rules of the controller in the pool's namespace: leader election, capacity objects, its owner chain. */
    public static final List<PolicyRule> CONTROLLER_NAMESPACE_RULES = List.of(
            rule("coordination.k8s.io", "leases", "get", "list", "watch", "create", "update", "patch", "delete"),
            rule("storage.k8s.io", "csistoragecapacities", "get", "list", "watch", "create", "update", "patch", "delete"),
            rule("apps", "replicasets", "get"),
            rule("apps", "deployments", "get"));

    /**
     * Cluster-wide rules of the node DaemonSet (one container, the loopcsi node role: it registers
     * with kubelet itself): its own node's LoopVolumes and LoopSnapshots (finalizer, status), its
     * LoopPoolNode (owned by the StoragePool it reads), its Node, Events.
     */
    public static final List<PolicyRule> NODE_CLUSTER_RULES = List.of(
            rule("", "nodes", "get"),
            rule("", "events", "create", "patch"),
            rule("loopcsi.io", "loopvolumes", "get", "list", "watch", "update", "patch"),
            rule("loopcsi.io", "loopvolumes/status", "update", "patch"),
            rule("loopcsi.io", "loopsnapshots", "get", "list", "watch", "update", "patch"),
            rule("loopcsi.io", "loopsnapshots/status", "update", "patch"),
            rule("loopcsi.io", "loopgroupsnapshots", "get", "list", "watch", "update", "patch"),
            rule("loopcsi.io", "loopgroupsnapshots/status", "update", "patch"),
            // list: the transfer server admits to a TLS handshake the certificates the pool's nodes published (PublishedPins)
            rule("loopcsi.io", "looppoolnodes", "get", "list", "create", "update", "patch"),
            rule("loopcsi.io", "looppoolnodes/status", "update", "patch"),
            rule("loopcsi.io", "storagepools", "get"),
            // the transfer server (issue 35): the authorisations it serves, the peers' pinned certificates (their
            // LoopPoolNodes, read above), the caller's token (TokenReview) and the Pod the token is bound to
            rule("loopcsi.io", "looptransfers", "get", "list", "watch"),
            rule("authentication.k8s.io", "tokenreviews", "create"),
            rule("", "pods", "get"));

    /**
     * Where OpenShift's SecurityContextConstraints are served, the node pods (privileged, hostPath,
     * Bidirectional mount propagation) are admitted only if their ServiceAccount may use an SCC that
     * allows that: the built-in {@code privileged} one, as OpenShift's own CSI drivers do.
     */
    public static final String PRIVILEGED_SCC = "privileged";
    public static final List<PolicyRule> NODE_OPENSHIFT_RULES = List.of(new PolicyRuleBuilder()
            .withApiGroups("security.openshift.io").withResources("securitycontextconstraints").withResourceNames(PRIVILEGED_SCC)
            .withVerbs("use").build());

    private CsiRbac() {
    }

    public static ServiceAccount serviceAccount(StoragePool pool, String namespace, String component) {
        return new ServiceAccountBuilder()
                .withNewMetadata().withName(name(pool, component)).withNamespace(namespace).withLabels(PoolNames.labels(pool, component))
                .endMetadata()
                .build();
    }

    /** The component's ClusterRole on a plain Kubernetes server. */
    public static ClusterRole clusterRole(StoragePool pool, String component) {
        return clusterRole(pool, component, ClusterInfo.CURRENT);
    }

    /** The component's ClusterRole; the node's also allows the privileged SCC where the server serves SCCs. */
    public static ClusterRole clusterRole(StoragePool pool, String component, ClusterInfo cluster) {
        List<PolicyRule> rules = new java.util.ArrayList<>(component.equals(CONTROLLER) ? CONTROLLER_CLUSTER_RULES : NODE_CLUSTER_RULES);
        if (component.equals(NODE) && cluster.securityContextConstraints()) {
            rules.addAll(NODE_OPENSHIFT_RULES);
        }
        return new ClusterRoleBuilder()
                .withNewMetadata().withName(name(pool, component)).withLabels(PoolNames.labels(pool, component)).endMetadata()
                .withRules(rules)
                .build();
    }

    public static ClusterRoleBinding clusterRoleBinding(StoragePool pool, String namespace, String component) {
        return new ClusterRoleBindingBuilder()
                .withNewMetadata().withName(name(pool, component)).withLabels(PoolNames.labels(pool, component)).endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", name(pool, component))
                .addNewSubject().withKind("ServiceAccount").withName(name(pool, component)).withNamespace(namespace).endSubject()
                .build();
    }

    public static Role controllerRole(StoragePool pool, String namespace) {
        return new RoleBuilder()
                .withNewMetadata().withName(PoolNames.controller(pool)).withNamespace(namespace)
                .withLabels(PoolNames.labels(pool, CONTROLLER)).endMetadata()
                .withRules(CONTROLLER_NAMESPACE_RULES)
                .build();
    }

    public static RoleBinding controllerRoleBinding(StoragePool pool, String namespace) {
        return new RoleBindingBuilder()
                .withNewMetadata().withName(PoolNames.controller(pool)).withNamespace(namespace)
                .withLabels(PoolNames.labels(pool, CONTROLLER)).endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "Role", PoolNames.controller(pool))
                .addNewSubject().withKind("ServiceAccount").withName(PoolNames.controller(pool)).withNamespace(namespace).endSubject()
                .build();
    }

    static String name(StoragePool pool, String component) {
        return component.equals(CONTROLLER) ? PoolNames.controller(pool) : PoolNames.node(pool);
    }

    private static PolicyRule rule(String group, String resource, String... verbs) {
        return new PolicyRuleBuilder().withApiGroups(group).withResources(resource).withVerbs(verbs).build();
    }
}
