package io.loopcsi.operator;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.AggregatedOperatorException;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.WorkflowReconcileResult;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.LostNode;
import io.loopcsi.operator.api.ManagedObject;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.api.StoragePoolStatus;
import io.loopcsi.operator.dependents.ControllerClusterRoleBindingDependent;
import io.loopcsi.operator.dependents.ControllerClusterRoleDependent;
import io.loopcsi.operator.dependents.ControllerDeploymentDependent;
import io.loopcsi.operator.dependents.ControllerRoleBindingDependent;
import io.loopcsi.operator.dependents.ControllerRoleDependent;
import io.loopcsi.operator.dependents.ControllerServiceAccountDependent;
import io.loopcsi.operator.dependents.CsiDriverDependent;
import io.loopcsi.operator.dependents.GrafanaDashboardDependent;
import io.loopcsi.operator.dependents.MetricsServiceDependent;
import io.loopcsi.operator.dependents.NodeClusterRoleBindingDependent;
import io.loopcsi.operator.dependents.NodeClusterRoleDependent;
import io.loopcsi.operator.dependents.NodeDaemonSetDependent;
import io.loopcsi.operator.dependents.NodeServiceAccountDependent;
import io.loopcsi.operator.dependents.ServiceMonitorApplier;
import io.loopcsi.operator.dependents.StorageClassesDependent;
import io.loopcsi.operator.dependents.VolumeAttributesClassesApplier;
import io.loopcsi.operator.dependents.VolumeGroupSnapshotClassApplier;
import io.loopcsi.operator.dependents.VolumeSnapshotClassApplier;
import io.loopcsi.operator.desired.ClusterInfo;
import io.loopcsi.operator.desired.ContainerResources;
import io.loopcsi.operator.desired.NodeTransfer;
import io.loopcsi.operator.desired.ControllerDeployment;
import io.loopcsi.operator.desired.CsiDriverSpec;
import io.loopcsi.operator.desired.CsiRbac;
import io.loopcsi.operator.desired.GrafanaDashboard;
import io.loopcsi.operator.desired.MetricsService;
import io.loopcsi.operator.desired.NodeDaemonSet;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.StorageClasses;
import io.loopcsi.operator.status.BackingDirConflict;
import io.loopcsi.operator.status.Conditions;
import io.loopcsi.operator.status.ManagedRecord;
import io.loopcsi.operator.status.OwnershipCheck;
import io.loopcsi.operator.status.PoolEvents;
import io.loopcsi.operator.status.PoolStatus;
import io.loopcsi.operator.status.HostReserve;
import io.loopcsi.operator.status.LostNodes;
import io.loopcsi.operator.status.PoolVolumes;
import io.loopcsi.operator.status.UnsupportedNodes;

/**
 * Rolls out a StoragePool's CSI components and reports on them.
 *
 * <p>Order of a reconcile: (1) refuse a backingDir that overlaps an older pool's on a shared node
 * ({@link BackingDirConflict}) and names taken by objects the pool does not own (the
 * workflow would take them over with a forced server-side apply), (2) run the dependent
 * workflow (explicit invocation, so (1) can stop it), then the appliers of optional APIs
 * (ServiceMonitor, PrometheusRule, VolumeSnapshotClass, VolumeGroupSnapshotClass, VolumeAttributesClasses), (3) compute status and record an Event
 * when Ready changes, (4) report lost nodes ({@link LostNodes}: status, an Event per newly lost node,
 * gauges) and act on deleted ones ({@link LostNodeRelease}).
 *
 * <p>Deletion: the finalizer is kept while PersistentVolumes of the pool's driver exist; the
 * components keep running so that those volumes can still be deleted through the driver.
 * Once none remain, the finalizer goes and Kubernetes garbage-collects the owned objects.
 * Nothing ever deletes backing data on the nodes.
 */
@Workflow(explicitInvocation = true, handleExceptionsInReconciler = true, dependents = {
        @Dependent(name = "csi-driver", type = CsiDriverDependent.class),
        @Dependent(name = "controller-sa", type = ControllerServiceAccountDependent.class),
        @Dependent(name = "node-sa", type = NodeServiceAccountDependent.class),
        @Dependent(name = "controller-clusterrole", type = ControllerClusterRoleDependent.class),
        @Dependent(name = "node-clusterrole", type = NodeClusterRoleDependent.class),
        // a binding refers to its role: the API server checks the role's rules when the binding is made
        @Dependent(name = "controller-clusterrolebinding", type = ControllerClusterRoleBindingDependent.class,
                dependsOn = { "controller-clusterrole", "controller-sa" }),
        @Dependent(name = "node-clusterrolebinding", type = NodeClusterRoleBindingDependent.class, dependsOn = { "node-clusterrole", "node-sa" }),
        @Dependent(name = "controller-role", type = ControllerRoleDependent.class),
        @Dependent(name = "controller-rolebinding", type = ControllerRoleBindingDependent.class, dependsOn = { "controller-role", "controller-sa" }),
        @Dependent(name = "controller", type = ControllerDeploymentDependent.class,
                dependsOn = { "controller-sa", "controller-clusterrolebinding", "controller-rolebinding", "csi-driver" }),
        @Dependent(name = "node", type = NodeDaemonSetDependent.class,
                dependsOn = { "node-sa", "node-clusterrolebinding", "csi-driver" }),
        @Dependent(name = "storage-classes", type = StorageClassesDependent.class, dependsOn = "csi-driver"),
        @Dependent(name = "metrics-service", type = MetricsServiceDependent.class),
        @Dependent(name = "grafana-dashboard", type = GrafanaDashboardDependent.class, reconcilePrecondition = GrafanaDashboardDependent.Wanted.class),
})
@ControllerConfiguration(name = StoragePoolReconciler.NAME)
// Beyond the rules QOSDK derives from the dependents: PersistentVolumes (deletion hold, status)
// and Events (about pools), then every rule the operator grants to a pool's components, which it
// must hold itself (RBAC escalation prevention). OperatorRbacTest checks that these cover CsiRbac.
@RBACRule(apiGroups = "", resources = "persistentvolumes", verbs = { "get", "list", "watch", "create", "delete", "patch" })
@RBACRule(apiGroups = "", resources = "events", verbs = { "get", "list", "watch", "create", "update", "patch" })
// delete: the claims of volumes on deleted nodes (spec.lostNodes: ReleaseClaims, LostNodeRelease)
@RBACRule(apiGroups = "", resources = { "persistentvolumeclaims" }, verbs = { "get", "list", "watch", "update", "patch", "delete" })
@RBACRule(apiGroups = "", resources = { "persistentvolumeclaims/status" }, verbs = { "patch" })
@RBACRule(apiGroups = "", resources = { "nodes", "pods" }, verbs = { "get", "list", "watch" })
@RBACRule(apiGroups = "storage.k8s.io", resources = { "csinodes", "volumeattachments" }, verbs = { "get", "list", "watch" })
// the pool's VolumeAttributesClasses (VolumeAttributesClassesApplier: server-side apply, delete when renamed)
@RBACRule(apiGroups = "storage.k8s.io", resources = "volumeattributesclasses", verbs = { "get", "list", "watch", "create", "patch", "delete" })
@RBACRule(apiGroups = "storage.k8s.io", resources = "csistoragecapacities", verbs = { "get", "list", "watch", "create", "update", "patch", "delete" })
@RBACRule(apiGroups = "snapshot.storage.k8s.io", resources = { "volumesnapshotclasses", "volumesnapshots", "volumesnapshotcontents" },
        verbs = { "get", "list", "watch", "create", "update", "delete", "patch" })
@RBACRule(apiGroups = "snapshot.storage.k8s.io", resources = "volumesnapshotcontents/status", verbs = { "update", "patch" })
@RBACRule(apiGroups = "groupsnapshot.storage.k8s.io", resources = "volumegroupsnapshotcontents", verbs = { "get", "list", "watch", "update", "patch" })
// the pool's VolumeGroupSnapshotClass (VolumeGroupSnapshotClassApplier) as well as what csi-snapshotter reads
@RBACRule(apiGroups = "groupsnapshot.storage.k8s.io", resources = "volumegroupsnapshotclasses",
        verbs = { "get", "list", "watch", "create", "update", "patch", "delete" })
@RBACRule(apiGroups = "groupsnapshot.storage.k8s.io", resources = "volumegroupsnapshotcontents/status", verbs = { "update", "patch" })
@RBACRule(apiGroups = "coordination.k8s.io", resources = "leases", verbs = { "get", "list", "watch", "create", "update", "patch", "delete" })
@RBACRule(apiGroups = "apps", resources = "replicasets", verbs = { "get" })
// the node role's transfer server checks its callers' tokens (granted to the node pods)
@RBACRule(apiGroups = "authentication.k8s.io", resources = "tokenreviews", verbs = { "create" })
// the hand-off objects the pool's controller and node roles use (granted to them), and the
// per-node capacity the operator sums into the pool's status
@RBACRule(apiGroups = "loopcsi.io", resources = { "loopvolumes", "loopsnapshots", "loopgroupsnapshots", "looppoolnodes", "looptransfers" },
        verbs = { "get", "list", "watch", "create", "update", "patch", "delete" })
@RBACRule(apiGroups = "loopcsi.io", resources = { "loopvolumes/status", "loopsnapshots/status", "loopgroupsnapshots/status",
        "looppoolnodes/status" },
        verbs = { "update", "patch" })
// server-side apply that creates an object needs create as well as patch
// whether the Prometheus Operator's CRD exists (ServiceMonitorCrdPresent); JOSDK's own CRD check is
// off (quarkus.operator-sdk.crd.validate=false), which also drops QOSDK's generic CRD-reading role
@RBACRule(apiGroups = "apiextensions.k8s.io", resources = "customresourcedefinitions", verbs = { "get" })
// OpenShift: the operator grants its node pods the privileged SCC's use (CsiRbac.NODE_OPENSHIFT_RULES), so it holds it
@RBACRule(apiGroups = "security.openshift.io", resources = "securitycontextconstraints", resourceNames = "privileged", verbs = "use")
// the Pod Security level of its namespace, named when the node pods are refused admission (NodePodAdmission)
@RBACRule(apiGroups = "", resources = "namespaces", verbs = "get")
// list: the copies of the pool's objects (PoolOwnership), found before the pool goes
@RBACRule(apiGroups = "monitoring.coreos.com", resources = { "servicemonitors", "prometheusrules" }, verbs = { "get", "list", "create", "patch" })
public class StoragePoolReconciler implements Reconciler<StoragePool>, Cleaner<StoragePool> {

    /** The controller's name; QOSDK names the operator's generated ClusterRole after it (loopcsi-storagepool-cluster-role). */
    public static final String NAME = "loopcsi-storagepool";
    /** Longest pool name whose derived object names stay valid (a Service name is at most 63 characters). */
    public static final int MAX_NAME = 63 - "loopcsi--metrics".length();
    /** Condition type: classes removed from the spec but kept because claims or volumes still use them. */
    public static final String CLASSES_KEPT = "StorageClassesKept";
    /** Event reason: an object carries the pool's marks but is not the pool's. */
    public static final String UNMANAGED_COPY = "UnmanagedCopy";
    /** Condition: an optional class (group snapshot, attributes) of the pool's name exists and is not the pool's. */
    public static final String CLASSES_SKIPPED = "ClassesSkipped";
    private static final Duration PROBLEM_RECHECK = Duration.ofSeconds(10);
    private static final Duration DELETION_RECHECK = Duration.ofSeconds(5);
    private static final Logger LOG = Logger.getLogger(StoragePoolReconciler.class);
    private final ServiceMonitorApplier serviceMonitor = new ServiceMonitorApplier();
    private final io.loopcsi.operator.dependents.PrometheusRuleApplier prometheusRule = new io.loopcsi.operator.dependents.PrometheusRuleApplier();
    private final VolumeSnapshotClassApplier snapshotClass = new VolumeSnapshotClassApplier();
    private final VolumeGroupSnapshotClassApplier groupSnapshotClass = new VolumeGroupSnapshotClassApplier();
    private final VolumeAttributesClassesApplier attributesClasses = new VolumeAttributesClassesApplier();
    private final PoolGauges gauges;

    /** Outside CDI (tests that run the reconciler in a plain JOSDK Operator): gauges in a registry of their own. */
    public StoragePoolReconciler() {
        this(new PoolGauges(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    }

    @jakarta.inject.Inject
    public StoragePoolReconciler(PoolGauges gauges) {
        this.gauges = gauges;
    }

    @Override
    public UpdateControl<StoragePool> reconcile(StoragePool pool, Context<StoragePool> context) {
        KubernetesClient client = context.getClient();
        String ns = OperatorSettings.namespace();
        String problemReason = null;
        String problem = null;
        Optional<String> dirConflict = BackingDirConflict.find(pool, context.getPrimaryCache().list().toList());
        // checked before anything is applied: containers that could not run must not replace running ones
        Optional<String> badResources = ContainerResources.problem(pool);
        Optional<String> badTransfer = NodeTransfer.problem(pool);
        if (pool.getMetadata().getName().length() > MAX_NAME) {
            problemReason = "InvalidName";
            problem = "pool name is longer than " + MAX_NAME + " characters; the names derived from it would be invalid";
        } else if (badResources.isPresent()) {
            problemReason = ContainerResources.REASON;
            problem = badResources.get() + "; the running controller and node components are left as they are";
        } else if (badTransfer.isPresent()) {
            problemReason = NodeTransfer.REASON;
            problem = badTransfer.get() + "; the running controller and node components are left as they are";
        } else if (dirConflict.isPresent()) {
            problemReason = BackingDirConflict.REASON;
            problem = dirConflict.get();
        } else {
            List<String> foreign = new ArrayList<>(OwnershipCheck.foreign(client, pool, namedObjects(pool, ns, Discovery.clusterInfo(client))));
            snapshotClass.foreign(pool, client).ifPresent(foreign::add);
            if (!foreign.isEmpty()) {
                problemReason = "NameConflict";
                problem = "not taking over objects this pool does not own: " + String.join(", ", foreign)
                        + "; rename them in the spec or delete them";
            }
        }
        if (problem == null) {
            // an explicitly invoked workflow throws what its dependents threw: that is reported in
            // status (Degraded) and retried at the next reconcile, instead of only being logged
            try {
                WorkflowReconcileResult result = context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
                if (result.erroredDependentsExist()) {
                    problem = result.getErroredDependents().entrySet().stream()
                            .map(e -> e.getKey().name() + ": " + e.getValue().getMessage()).collect(Collectors.joining("; "));
                }
            } catch (AggregatedOperatorException e) {
                e.getAggregatedExceptions().values().forEach(x -> LOG.debug("dependent failed", x));
                problem = e.getAggregatedExceptions().entrySet().stream()
                        .map(x -> x.getKey() + ": " + x.getValue().getMessage()).collect(Collectors.joining("; "));
            }
            if (problem == null) {
                try {
                    serviceMonitor.reconcile(pool, client);
                } catch (KubernetesClientException e) {
                    problem = "service-monitor: " + e.getMessage();
                }
                try {
                    prometheusRule.reconcile(pool, client);
                } catch (KubernetesClientException e) {
                    problem = "prometheus-rule: " + e.getMessage();
                }
                try {
                    snapshotClass.reconcile(pool, client);
                } catch (KubernetesClientException e) {
                    problem = "volume-snapshot-class: " + e.getMessage();
                }
                try {
                    groupSnapshotClass.reconcile(pool, client);
                } catch (KubernetesClientException e) {
                    problem = "volume-group-snapshot-class: " + e.getMessage();
                }
                try {
                    attributesClasses.reconcile(pool, client);
                } catch (KubernetesClientException e) {
                    problem = "volume-attributes-classes: " + e.getMessage();
                }
            }
            if (problem != null) {
                problemReason = "ApplyFailed";
                LOG.warnf("StoragePool %s: %s", pool.getMetadata().getName(), problem);
            }
        }
        // by name: a user's copy of the Deployment or DaemonSet may carry the pool's marks as well
        Deployment controller = context.getSecondaryResourcesAsStream(Deployment.class)
                .filter(d -> PoolNames.controller(pool).equals(d.getMetadata().getName()) && ns.equals(d.getMetadata().getNamespace()))
                .findFirst().orElse(null);
        DaemonSet nodes = context.getSecondaryResourcesAsStream(DaemonSet.class)
                .filter(d -> PoolNames.node(pool).equals(d.getMetadata().getName()) && ns.equals(d.getMetadata().getNamespace()))
                .findFirst().orElse(null);
        PoolVolumes volumes = PoolVolumes.of(client, pool.driverName());
        StoragePoolStatus previous = pool.getStatus();
        Instant now = Instant.now();
        Optional<LostNodeInputs> lostInputs = lostNodeInputs(client, pool);
        List<LoopPoolNode> reports = lostInputs.map(LostNodeInputs::reports).orElseGet(() -> poolNodes(client, pool));
        List<LostNode> lost = lostInputs.map(in -> LostNodes.of(in.reports(), in.nodes(), in.volumes(), now))
                .orElse(previous == null || previous.getLostNodes() == null ? List.of() : previous.getLostNodes());
        StoragePoolStatus next = PoolStatus.compute(pool, previous, new PoolStatus.Observed(controller, nodes, volumes, problemReason, problem,
                reports, unsupportedNodes(client, ns, pool), lost, nodePodsRefused(client, ns, nodes).orElse(null)), now);
        recordOwnership(client, pool, ns, previous, next, now);
        if (problem == null) {
            recordSkippedClasses(client, pool, next, now);
        }
        recordTransition(client, pool, previous, next);
        actOnLostNodes(client, pool, previous, lost, lostInputs);
        gauges.orphans(pool.getMetadata().getName(), next.getOrphans());
        gauges.record(pool.getMetadata().getName(), new PoolGauges.Observed(Conditions.isTrue(next.getConditions(), Conditions.READY),
                nodes == null || nodes.getStatus() == null || nodes.getStatus().getDesiredNumberScheduled() == null ? 0
                        : nodes.getStatus().getDesiredNumberScheduled(),
                next.getReadyNodes() == null ? 0 : next.getReadyNodes(), Boolean.TRUE.equals(next.getControllerReady()), problem != null),
                problemReason);
        pool.setStatus(next);
        Duration recheck = OperatorSettings.recheck();
        // a problem is looked at again sooner, never later
        return UpdateControl.patchStatus(pool).rescheduleAfter(problem != null && PROBLEM_RECHECK.compareTo(recheck) < 0 ? PROBLEM_RECHECK : recheck);
    }

    /**
     * The optional classes (VolumeGroupSnapshotClass, VolumeAttributesClasses) at the pool's names that
     * someone else made: not made, not blocking (see GatedClassApplier), named in ClassesSkipped.
     */
    private void recordSkippedClasses(KubernetesClient client, StoragePool pool, StoragePoolStatus next, Instant now) {
        Long gen = pool.getMetadata().getGeneration();
        try {
            List<String> skipped = new ArrayList<>(groupSnapshotClass.foreign(pool, client));
            skipped.addAll(attributesClasses.foreign(pool, client));
            if (!skipped.isEmpty()) {
                next.setConditions(Conditions.set(next.getConditions(), CLASSES_SKIPPED, true, "NotOwned", "not made, because an object"
                        + " this pool did not make has the name: " + String.join(", ", skipped)
                        + "; theirs is left as it is (delete it and the pool makes its own)", gen, now));
            } else if (Conditions.find(next.getConditions(), CLASSES_SKIPPED).isPresent()) {
                next.setConditions(Conditions.set(next.getConditions(), CLASSES_SKIPPED, false, "AllMade",
                        "every optional class of the pool is made where its API is served", gen, now));
            }
        } catch (KubernetesClientException e) {
            LOG.warnf("StoragePool %s: cannot read its optional classes (%s)", pool.getMetadata().getName(), e.getMessage());
        }
    }

    /**
     * The pool's record of its own objects ({@link ManagedRecord}), the copies that carry its marks
     * (status, and a Warning Event when one is first seen) and the condition naming the classes
     * kept because claims still use them. On a failed read the previous record stays.
     */
    private static void recordOwnership(KubernetesClient client, StoragePool pool, String ns, StoragePoolStatus previous, StoragePoolStatus next,
            Instant now) {
        next.setManagedObjects(previous == null ? null : previous.getManagedObjects());
        next.setUnmanagedCopies(previous == null ? null : previous.getUnmanagedCopies());
        try {
            Map<String, HasMetadata> wanted = PoolOwnership.wanted(pool, ns, Discovery.clusterInfo(client));
            List<ManagedObject> record = PoolOwnership.record(client, pool, wanted);
            next.setManagedObjects(record);
            List<String> copies = PoolOwnership.copies(client, pool, record, wanted.keySet());
            List<String> before = previous == null || previous.getUnmanagedCopies() == null ? List.of() : previous.getUnmanagedCopies();
            for (String c : copies) {
                if (!before.contains(c)) {
                    PoolEvents.warning(client, pool, UNMANAGED_COPY, c + " carries this pool's labels or owner reference but the operator did not"
                            + " make it: it is not managed (never updated or deleted; the pool's owner reference is taken off it when the pool"
                            + " is deleted)");
                }
            }
            next.setUnmanagedCopies(copies.isEmpty() ? null : copies);
            Map<String, List<String>> kept = ClassUsers.of(client, PoolOwnership.unwantedClasses(pool, record));
            Long gen = pool.getMetadata().getGeneration();
            if (!kept.isEmpty()) {
                next.setConditions(Conditions.set(next.getConditions(), CLASSES_KEPT, true, "InUse", "no longer in spec.storageClasses but kept"
                        + " while claims or volumes use them: " + ClassUsers.describe(kept, 10)
                        + "; deleted once none does", gen, now));
            } else if (Conditions.find(next.getConditions(), CLASSES_KEPT).isPresent()) {
                next.setConditions(Conditions.set(next.getConditions(), CLASSES_KEPT, false, "NoneKept",
                        "every StorageClass of the pool is in its spec", gen, now));
            }
        } catch (KubernetesClientException e) {
            LOG.warnf("StoragePool %s: cannot read its objects to record them (%s): the previous record stays", pool.getMetadata().getName(),
                    e.getMessage());
        }
    }

    /** The nodes whose doctor init container refused them (Degraded, NodeNotSupported); none when the pods cannot be listed. */
    private static List<String> unsupportedNodes(KubernetesClient client, String ns, StoragePool pool) {
        try {
            return UnsupportedNodes.of(client.pods().inNamespace(ns).withLabels(PoolNames.selector(pool, CsiRbac.NODE)).list().getItems());
        } catch (KubernetesClientException e) {
            LOG.debugf("cannot list the node pods of pool %s: %s", pool.getMetadata().getName(), e.getMessage());
            return List.of();
        }
    }

    /**
     * Why the API server refuses the node pods, from the DaemonSet's FailedCreate Events (read only
     * while pods are missing); empty when nothing is refused or the Events cannot be read.
     */
    private static Optional<String> nodePodsRefused(KubernetesClient client, String ns, DaemonSet nodes) {
        if (nodes == null || nodes.getStatus() != null && nodes.getStatus().getDesiredNumberScheduled() != null
                && nodes.getStatus().getDesiredNumberScheduled() > 0
                && java.util.Objects.requireNonNullElse(nodes.getStatus().getCurrentNumberScheduled(), 0) >= nodes.getStatus().getDesiredNumberScheduled()) {
            return Optional.empty(); // every desired pod is there: nothing refused
        }
        try {
            List<io.fabric8.kubernetes.api.model.Event> events = client.v1().events().inNamespace(ns)
                    .withField("involvedObject.kind", "DaemonSet").withField("involvedObject.name", nodes.getMetadata().getName())
                    .list().getItems().stream()
                    .filter(e -> nodes.getMetadata().getUid() == null || nodes.getMetadata().getUid().equals(e.getInvolvedObject().getUid()))
                    .toList();
            io.fabric8.kubernetes.api.model.Namespace namespace = null;
            try {
                namespace = client.namespaces().withName(ns).get();
            } catch (KubernetesClientException e) {
                LOG.debugf("cannot read namespace %s: %s", ns, e.getMessage());
            }
            return io.loopcsi.operator.status.NodePodAdmission.refusal(nodes, events, namespace, Instant.now());
        } catch (KubernetesClientException e) {
            LOG.debugf("cannot list the Events of DaemonSet %s/%s: %s", ns, nodes.getMetadata().getName(), e.getMessage());
            return Optional.empty();
        }
    }

    @Override
    public DeleteControl cleanup(StoragePool pool, Context<StoragePool> context) {
        KubernetesClient client = context.getClient();
        PoolVolumes volumes = PoolVolumes.of(client, pool.driverName());
        if (volumes.count() == 0) {
            // Kubernetes garbage-collects whatever carries the pool's owner reference: a user's copy too
            try {
                for (String c : PoolOwnership.releaseCopies(client, pool, OperatorSettings.namespace(), Discovery.clusterInfo(client))) {
                    LOG.infof("StoragePool %s: %s is not the pool's: its owner reference to the pool removed, so that it stays",
                            pool.getMetadata().getName(), c);
                    PoolEvents.normal(client, pool, "CopyKept", c + " is not the pool's: the pool's owner reference is taken off it, so it stays");
                }
            } catch (KubernetesClientException e) {
                LOG.warnf("StoragePool %s: cannot release the copies of its objects (%s); deletion retried", pool.getMetadata().getName(),
                        e.getMessage());
                return DeleteControl.noFinalizerRemoval().rescheduleAfter(DELETION_RECHECK);
            }
            LOG.infof("StoragePool %s: no PersistentVolumes of %s left, releasing it (backing data on the nodes is kept)",
                    pool.getMetadata().getName(), pool.driverName());
            gauges.forget(pool.getMetadata().getName());
            return DeleteControl.defaultDelete();
        }
        String message = "deletion held: " + volumes.count() + " PersistentVolume(s) of driver " + pool.driverName() + " still exist: "
                + volumes.describe(10) + "; delete them (or their claims) first";
        StoragePoolStatus status = pool.getStatus() == null ? new StoragePoolStatus() : pool.getStatus();
        boolean changed = !Conditions.find(status.getConditions(), Conditions.READY).map(c -> message.equals(c.getMessage())).orElse(false);
        if (changed) {
            Instant now = Instant.now();
            Long gen = pool.getMetadata().getGeneration();
            status.setConditions(Conditions.set(status.getConditions(), Conditions.READY, false, "DeletionBlocked", message, gen, now));
            status.setConditions(Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "DeletionBlocked", message, gen, now));
            status.setVolumes(volumes.count());
            patchStatus(client, pool, status);
            PoolEvents.warning(client, pool, "DeletionBlocked", message);
        }
        return DeleteControl.noFinalizerRemoval().rescheduleAfter(DELETION_RECHECK);
    }

    /** The nodes' reports of their part of the pool (their capacity, allocation, heartbeat). */
    private static List<LoopPoolNode> poolNodes(KubernetesClient client, StoragePool pool) {
        try {
            return client.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, pool.getMetadata().getName()).list().getItems();
        } catch (KubernetesClientException e) {
            LOG.debugf("cannot list LoopPoolNodes of %s: %s", pool.getMetadata().getName(), e.getMessage());
            return List.of();
        }
    }

    /**
     * A Warning Event per newly lost node (or changed reason), the gauges, and for nodes that are gone
     * what LostNodeRelease plans. A failure is logged and retried at the next reconcile.
     */
    private void actOnLostNodes(KubernetesClient client, StoragePool pool, StoragePoolStatus previous, List<LostNode> lost,
            Optional<LostNodeInputs> inputs) {
        for (LostNode n : LostNodes.newlyLost(previous == null ? null : previous.getLostNodes(), lost)) {
            PoolEvents.warning(client, pool, LostNodes.REASON, "node " + LostNodes.describe(n) + " does not serve the pool"
                    + (LostNodes.NODE_DELETED.equals(n.getReason()) ? ": its Node object is deleted (spec.lostNodes: " + pool.getSpec().getLostNodes() + ")"
                            : ": its node plugin's heartbeat is stale; waiting for it to come back"));
        }
        gauges.lostNodes(pool.getMetadata().getName(), lost);
        if (inputs.isPresent() && lost.stream().anyMatch(n -> LostNodes.NODE_DELETED.equals(n.getReason()))) {
            LostNodeInputs in = inputs.get();
            try {
                LostNodeRelease.apply(client, pool, LostNodeRelease.plan(pool, lost, in.volumes(), in.snapshots(), in.reports(),
                        client.persistentVolumes().list().getItems()));
            } catch (KubernetesClientException e) {
                LOG.warnf("StoragePool %s: cannot list PersistentVolumes (%s): the claims of deleted nodes are released at a later reconcile",
                        pool.getMetadata().getName(), e.getMessage());
            }
        }
    }

    /** What lost-node detection reads: the pool's LoopPoolNodes, Node names, the pool's LoopVolumes and LoopSnapshots. */
    private record LostNodeInputs(List<LoopPoolNode> reports, Set<String> nodes, List<LoopVolume> volumes, List<LoopSnapshot> snapshots) {
    }

    /**
     * Empty when any of them cannot be listed: then the last status is kept (a failed list must never make
     * a node look silent or deleted).
     */
    private static Optional<LostNodeInputs> lostNodeInputs(KubernetesClient client, StoragePool pool) {
        try {
            String name = pool.getMetadata().getName();
            List<LoopPoolNode> reports = client.resources(LoopPoolNode.class).withLabel(HandoffNames.POOL_LABEL, name).list().getItems();
            Set<String> nodes = client.nodes().list().getItems().stream().map(n -> n.getMetadata().getName()).collect(Collectors.toSet());
            return Optional.of(new LostNodeInputs(reports, nodes,
                    client.resources(LoopVolume.class).withLabel(HandoffNames.POOL_LABEL, name).list().getItems(),
                    client.resources(LoopSnapshot.class).withLabel(HandoffNames.POOL_LABEL, name).list().getItems()));
        } catch (KubernetesClientException e) {
            LOG.warnf("StoragePool %s: cannot list LoopPoolNodes, Nodes, LoopVolumes or LoopSnapshots (%s): lost nodes not checked",
                    pool.getMetadata().getName(), e.getMessage());
            return Optional.empty();
        }
    }

    /** Every single-named object the pool wants, for the ownership check (StorageClasses included). */
    static List<HasMetadata> namedObjects(StoragePool pool, String ns, ClusterInfo cluster) {
        List<HasMetadata> all = new ArrayList<>();
        all.add(CsiDriverSpec.desired(pool, cluster));
        for (String c : List.of(CsiRbac.CONTROLLER, CsiRbac.NODE)) {
            all.add(CsiRbac.serviceAccount(pool, ns, c));
            all.add(CsiRbac.clusterRole(pool, c));
            all.add(CsiRbac.clusterRoleBinding(pool, ns, c));
        }
        all.add(CsiRbac.controllerRole(pool, ns));
        all.add(CsiRbac.controllerRoleBinding(pool, ns));
        all.add(ControllerDeployment.desired(pool, ns, cluster));
        all.add(NodeDaemonSet.desired(pool, ns));
        all.add(MetricsService.desired(pool, ns));
        if (GrafanaDashboard.wanted(pool)) {
            all.add(GrafanaDashboard.desired(pool, ns, GrafanaDashboard.committed()));
        }
        Map<String, ?> classes = StorageClasses.desired(pool);
        classes.values().forEach(sc -> all.add((HasMetadata) sc));
        return all;
    }

    private static void recordTransition(KubernetesClient client, StoragePool pool, StoragePoolStatus previous, StoragePoolStatus next) {
        recordHostReserve(client, pool, previous, next);
        var before = previous == null ? null : Conditions.find(previous.getConditions(), Conditions.READY).orElse(null);
        var after = Conditions.find(next.getConditions(), Conditions.READY).orElseThrow();
        boolean same = before != null && Objects.equals(before.getStatus(), after.getStatus()) && Objects.equals(before.getReason(), after.getReason());
        if (same) {
            return;
        }
        if ("True".equals(after.getStatus())) {
            PoolEvents.normal(client, pool, after.getReason(), after.getMessage());
        } else if (Conditions.isTrue(next.getConditions(), Conditions.DEGRADED)) {
            PoolEvents.warning(client, pool, after.getReason(), after.getMessage());
        } else {
            PoolEvents.normal(client, pool, after.getReason(), after.getMessage());
        }
    }

    /** A Warning Event when the pool turns Degraded for its host reserve (Ready does not change: the pool still runs). */
    private static void recordHostReserve(KubernetesClient client, StoragePool pool, StoragePoolStatus previous, StoragePoolStatus next) {
        var before = previous == null ? null : Conditions.find(previous.getConditions(), Conditions.DEGRADED).orElse(null);
        var after = Conditions.find(next.getConditions(), Conditions.DEGRADED).orElse(null);
        if (after != null && "True".equals(after.getStatus()) && HostReserve.REASON.equals(after.getReason())
                && (before == null || !HostReserve.REASON.equals(before.getReason()) || !"True".equals(before.getStatus()))) {
            PoolEvents.warning(client, pool, HostReserve.REASON, after.getMessage());
        }
    }

    private static void patchStatus(KubernetesClient client, StoragePool pool, StoragePoolStatus status) {
        StoragePool patch = new StoragePool();
        patch.getMetadata().setName(pool.getMetadata().getName());
        patch.setStatus(status);
        client.resources(StoragePool.class).withName(pool.getMetadata().getName()).subresource("status")
                .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    }
}
