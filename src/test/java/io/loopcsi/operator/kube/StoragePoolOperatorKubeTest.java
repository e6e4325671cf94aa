package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.status.Conditions;

/**
 * The operator against a REAL kube-apiserver (kube-testenv, Kubernetes 1.20, with
 * kube-controller-manager for garbage collection). It installs the operator's manifests with
 * kubectl apply -k kubernetes/, then runs the operator in this JVM with a client that
 * impersonates the operator's ServiceAccount, so it has exactly the committed, generated RBAC:
 * a missing permission fails the test. Pools are applied with the real kubectl.
 *
 * <p>Runs when LOOPCSI_KUBE_TEST=1 and KUBECONFIG points at a throw-away cluster (.ci/run and
 * `make test-kube` arrange both); skipped otherwise.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class StoragePoolOperatorKubeTest {

    static final String NS = "loopcsi-system";
    static final String SA = "system:serviceaccount:" + NS + ":loopcsi-operator";
    static final String POOL = "local";
    static final String DRIVER = "local.loopcsi.io";
    static final Duration WAIT = Duration.ofSeconds(90);
    static final String RECHECK = "3s";

    static KubernetesClient admin;
    static KubernetesClient asOperator;
    static Operator operator;
    /** The reconciler's metrics (in the packaged operator: the Prometheus registry behind /q/metrics). */
    static final io.micrometer.core.instrument.simple.SimpleMeterRegistry METRICS = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

    @BeforeAll
    static void installAndStartTheOperator() {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            // surefire does not show why a class was skipped in @BeforeAll: say it here
            System.out.println("SKIPPED StoragePoolOperatorKubeTest: no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset);"
                    + " run `make test-kube` (what .ci/run does) to run the operator against a real API server");
        }
        assumeTrue(configured, "no test cluster: set LOOPCSI_KUBE_TEST=1 and KUBECONFIG (make test-kube / .ci/run start kube-testenv)");
        Kubectl.ok("apply", "-k", "kubernetes/");
        admin = new KubernetesClientBuilder().build();
        await("CRD established", () -> admin.apiextensions().v1().customResourceDefinitions().withName("storagepools.loopcsi.io").get()
                .getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername(SA);
        asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        // the impersonation is real: what the operator's RBAC does not grant is refused
        KubernetesClientException refused = assertThrows(KubernetesClientException.class, () -> asOperator.secrets().inAnyNamespace().list());
        assertEquals(403, refused.getCode());
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        // what the operator does not watch (PVs, CRDs that appear, Node objects) it sees at its periodic
        // reconcile: 3 s here instead of 30 s, the same behaviour proven without waiting most of it out
        System.setProperty(OperatorSettings.RECHECK_PROPERTY, RECHECK);
        operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
        operator.register(new StoragePoolReconciler(new io.loopcsi.operator.PoolGauges(METRICS)));
        operator.start();
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.stop();
        }
        System.clearProperty(OperatorSettings.RECHECK_PROPERTY);
        if (asOperator != null) {
            asOperator.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    @Test
    @Order(1)
    void theApiServerRefusesABadSpecWithAMessage() {
        Kubectl.Result r = Kubectl.tryApply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: bad}
                spec:
                  capacityPerNode: lots
                  fsTypes: [btrfs]
                  storageClasses: [{name: Not_A_Name, volumeMode: Tape}]
                """);
        assertNotEquals(0, r.exit(), r.out());
        for (String field : List.of("spec.capacityPerNode", "spec.fsTypes", "Not_A_Name", "Tape")) {
            assertTrue(r.out().contains(field), "message names " + field + ": " + r.out());
        }
        assertNotEquals(0, Kubectl.tryApply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: bad}
                spec: {backingDir: /x}
                """).exit(), "capacityPerNode is required");
    }

    @Test
    @Order(2)
    void theExamplePoolRollsOutEveryObject() throws Exception {
        Kubectl.ok("apply", "-f", "kubernetes/examples/storagepool.yaml");
        StoragePool pool = await("pool reconciled", () -> {
            StoragePool p = admin.resources(StoragePool.class).withName(POOL).get();
            return p.getStatus() != null && Long.valueOf(1).equals(p.getStatus().getObservedGeneration()) ? p : null;
        });
        String uid = pool.getMetadata().getUid();
        assertTrue(pool.getMetadata().getFinalizers().stream().anyMatch(f -> f.contains("storagepool")), "finalizer set");

        CSIDriver driver = await("CSIDriver", () -> admin.storage().v1().csiDrivers().withName(DRIVER).get());
        assertFalse(driver.getSpec().getAttachRequired());
        assertTrue(driver.getSpec().getStorageCapacity());
        assertEquals("File", driver.getSpec().getFsGroupPolicy());
        assertEquals(List.of("Persistent"), driver.getSpec().getVolumeLifecycleModes());
        assertOwned(driver.getMetadata().getOwnerReferences(), uid);

        for (String c : List.of("controller", "node")) {
            String name = "loopcsi-local-" + c;
            assertOwned(await("ServiceAccount " + name, () -> admin.serviceAccounts().inNamespace(NS).withName(name).get()).getMetadata()
                    .getOwnerReferences(), uid);
            assertOwned(await("ClusterRole " + name, () -> admin.rbac().clusterRoles().withName(name).get()).getMetadata().getOwnerReferences(),
                    uid);
            var crb = await("ClusterRoleBinding " + name, () -> admin.rbac().clusterRoleBindings().withName(name).get());
            assertEquals(name, crb.getRoleRef().getName());
            assertEquals(NS, crb.getSubjects().get(0).getNamespace());
        }
        await("Role", () -> admin.rbac().roles().inNamespace(NS).withName("loopcsi-local-controller").get());
        await("RoleBinding", () -> admin.rbac().roleBindings().inNamespace(NS).withName("loopcsi-local-controller").get());

        Deployment controller = await("controller Deployment", () -> admin.apps().deployments().inNamespace(NS).withName("loopcsi-local-controller").get());
        assertOwned(controller.getMetadata().getOwnerReferences(), uid);
        var prov = controller.getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> c.getName().equals("csi-provisioner"))
                .findFirst().orElseThrow();
        assertTrue(prov.getArgs().containsAll(List.of("--feature-gates=Topology=true", "--enable-capacity", "--capacity-ownerref-level=2",
                "--extra-create-metadata", "--strict-topology")), prov.getArgs().toString());

        DaemonSet node = await("node DaemonSet", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-local-node").get());
        var nodePod = node.getSpec().getTemplate().getSpec();
        assertEquals(Map.of("loopcsi.io/storage", "true"), nodePod.getNodeSelector());
        assertTrue(nodePod.getContainers().get(0).getSecurityContext().getPrivileged());
        assertTrue(nodePod.getContainers().get(0).getVolumeMounts().stream()
                .anyMatch(m -> m.getMountPath().equals("/var/lib/kubelet") && "Bidirectional".equals(m.getMountPropagation())));
        assertTrue(nodePod.getVolumes().stream().anyMatch(v -> v.getHostPath() != null && v.getHostPath().getPath().equals("/var/lib/loopcsi/local")));

        StorageClass xfs = await("StorageClass loopcsi-xfs", () -> admin.storage().v1().storageClasses().withName("loopcsi-xfs").get());
        assertEquals(DRIVER, xfs.getProvisioner());
        assertEquals("WaitForFirstConsumer", xfs.getVolumeBindingMode());
        assertEquals("xfs", xfs.getParameters().get("csi.storage.k8s.io/fstype"));
        assertEquals("true", xfs.getMetadata().getAnnotations().get("storageclass.kubernetes.io/is-default-class"));
        StorageClass block = await("StorageClass loopcsi-block", () -> admin.storage().v1().storageClasses().withName("loopcsi-block").get());
        assertNull(block.getParameters().get("csi.storage.k8s.io/fstype"));

        await("metrics Service", () -> admin.services().inNamespace(NS).withName("loopcsi-local-metrics").get());

        // the example asks for its Grafana dashboard: a ConfigMap Grafana's sidecar loads, for this pool
        ConfigMap dashboard = await("dashboard ConfigMap", () -> admin.configMaps().inNamespace(NS).withName("loopcsi-local-dashboard").get());
        assertOwned(dashboard.getMetadata().getOwnerReferences(), uid);
        assertEquals("1", dashboard.getMetadata().getLabels().get("grafana_dashboard"));
        JsonNode json = new ObjectMapper().readTree(dashboard.getData().get("loopcsi-local.json"));
        assertEquals("loopcsi-local", json.get("uid").asText());
        assertTrue(json.get("panels").size() > 10, "the committed dashboard's panels");
        JsonNode driverVariable = java.util.stream.StreamSupport.stream(json.path("templating").path("list").spliterator(), false)
                .filter(v -> v.path("name").asText().equals("driver")).findFirst().orElseThrow();
        assertEquals(DRIVER, driverVariable.path("current").path("value").path(0).asText(), "the dashboard opens on the pool's driver");

        // no kubelet here: pods stay Pending, so the pool is honestly not Ready, but progressing and not degraded
        StoragePool p = await("status after rollout", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName(POOL).get();
            return Conditions.find(x.getStatus().getConditions(), Conditions.DEGRADED).map(c -> "False".equals(c.getStatus())).orElse(false) ? x : null;
        });
        Condition ready = Conditions.find(p.getStatus().getConditions(), Conditions.READY).orElseThrow();
        assertEquals("False", ready.getStatus());
        assertEquals("ComponentsNotReady", ready.getReason());
        assertEquals(1L, ready.getObservedGeneration());
        assertNotNull(ready.getLastTransitionTime());
        assertTrue(Conditions.isTrue(p.getStatus().getConditions(), Conditions.PROGRESSING));
        assertEquals("0/0", p.getStatus().getNodes());
        assertFalse(p.getStatus().getControllerReady());
        String printed = Kubectl.ok("get", "storagepools");
        assertTrue(printed.contains("READY") && printed.contains("NODES") && printed.contains("CAPACITY") && printed.contains("ALLOCATED"), printed);
        await("an Event about the pool", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && "StoragePool".equals(e.getInvolvedObject().getKind())));
    }

    @Test
    @Order(3)
    void specChangesRollThrough() {
        // the Prometheus Operator's CRD appears: the next reconcile also writes a ServiceMonitor
        Kubectl.apply("""
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata: {name: servicemonitors.monitoring.coreos.com}
                spec:
                  group: monitoring.coreos.com
                  scope: Namespaced
                  names: {kind: ServiceMonitor, plural: servicemonitors, singular: servicemonitor, listKind: ServiceMonitorList}
                  versions:
                    - name: v1
                      served: true
                      storage: true
                      schema:
                        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                """);
        Kubectl.apply("""
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata: {name: prometheusrules.monitoring.coreos.com}
                spec:
                  group: monitoring.coreos.com
                  scope: Namespaced
                  names: {kind: PrometheusRule, plural: prometheusrules, singular: prometheusrule, listKind: PrometheusRuleList}
                  versions:
                    - name: v1
                      served: true
                      storage: true
                      schema:
                        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                """);
        for (String crd : List.of("servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com")) {
            await(crd + " established", () -> admin.apiextensions().v1().customResourceDefinitions()
                    .withName(crd).get().getStatus().getConditions().stream()
                    .anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        }
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", """
                {"spec": {"images": {"loopcsiNative": "example.org/loopcsi:next-native"},
                          "storageClasses": [{"name": "loopcsi-xfs", "fsType": "xfs", "isDefault": true}],
                          "monitoring": {"grafanaDashboard": false}}}
                """);
        // the pool's components run the native image unless spec.runtime says jvm
        await("DaemonSet rolled to the new image", () -> "example.org/loopcsi:next-native".equals(admin.apps().daemonSets().inNamespace(NS)
                .withName("loopcsi-local-node").get().getSpec().getTemplate().getSpec().getContainers().get(0).getImage()));
        await("Deployment rolled to the new image", () -> "example.org/loopcsi:next-native".equals(admin.apps().deployments().inNamespace(NS)
                .withName("loopcsi-local-controller").get().getSpec().getTemplate().getSpec().getContainers().get(0).getImage()));
        await("removed StorageClass deleted", () -> admin.storage().v1().storageClasses().withName("loopcsi-block").get() == null);
        await("dashboard ConfigMap removed when no longer asked for", () -> admin.configMaps().inNamespace(NS)
                .withName("loopcsi-local-dashboard").get() == null);
        assertNotNull(admin.storage().v1().storageClasses().withName("loopcsi-xfs").get());
        var monitor = await("ServiceMonitor written once its CRD exists", () -> admin.genericKubernetesResources("monitoring.coreos.com/v1",
                "ServiceMonitor").inNamespace(NS).withName("loopcsi-local-metrics").get());
        assertEquals("StoragePool", monitor.getMetadata().getOwnerReferences().get(0).getKind());
        var rule = await("PrometheusRule written once its CRD exists", () -> admin.genericKubernetesResources("monitoring.coreos.com/v1",
                "PrometheusRule").inNamespace(NS).withName("loopcsi-local-metrics").get());
        assertEquals("StoragePool", rule.getMetadata().getOwnerReferences().get(0).getKind());
        assertEquals(io.loopcsi.operator.desired.PrometheusRuleSpec.groups(admin.resources(StoragePool.class).withName(POOL).get()).size(),
                ((List<?>) ((java.util.Map<?, ?>) rule.getAdditionalProperties().get("spec")).get("groups")).size());
        await("the pool's gauges: reconciled without a problem", () -> METRICS.find("loopcsi.pool.reconcile.failing").tag("pool", POOL)
                .gauge() != null && METRICS.find("loopcsi.pool.reconcile.failing").tag("pool", POOL).gauge().value() == 0
                && METRICS.find("loopcsi.pool.nodes.desired").tag("pool", POOL).gauge() != null);
        await("status observed generation 2", () -> Long.valueOf(2).equals(
                admin.resources(StoragePool.class).withName(POOL).get().getStatus().getObservedGeneration()));
    }

    @Test
    @Order(4)
    void anObjectWeDoNotOwnIsNotTakenOver() {
        admin.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName("taken").endMetadata()
                .withProvisioner("someone.else.io").withVolumeBindingMode("Immediate").build()).create();
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", """
                {"spec": {"storageClasses": [{"name": "loopcsi-xfs", "fsType": "xfs", "isDefault": true}, {"name": "taken"}]}}
                """);
        StoragePool p = await("NameConflict reported", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName(POOL).get();
            return Conditions.find(x.getStatus().getConditions(), Conditions.READY).map(c -> "NameConflict".equals(c.getReason())).orElse(false)
                    ? x : null;
        });
        Condition ready = Conditions.find(p.getStatus().getConditions(), Conditions.READY).orElseThrow();
        assertEquals("False", ready.getStatus());
        assertTrue(ready.getMessage().contains("StorageClass taken"), ready.getMessage());
        assertTrue(Conditions.isTrue(p.getStatus().getConditions(), Conditions.DEGRADED));
        StorageClass theirs = admin.storage().v1().storageClasses().withName("taken").get();
        assertEquals("someone.else.io", theirs.getProvisioner());
        assertTrue(theirs.getMetadata().getOwnerReferences() == null || theirs.getMetadata().getOwnerReferences().isEmpty());
        // counted for Prometheus (alert LoopcsiReconcileFailing)
        assertEquals(1, METRICS.find("loopcsi.pool.reconcile.failing").tag("pool", POOL).gauge().value());
        assertTrue(METRICS.find("loopcsi.pool.reconcile.problems").tags("pool", POOL, "reason", "NameConflict").counter().count() >= 1);

        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", """
                {"spec": {"storageClasses": [{"name": "loopcsi-xfs", "fsType": "xfs", "isDefault": true}]}}
                """);
        await("conflict cleared", () -> Conditions.find(admin.resources(StoragePool.class).withName(POOL).get().getStatus().getConditions(),
                Conditions.DEGRADED).map(c -> "False".equals(c.getStatus())).orElse(false));
        assertNotNull(admin.storage().v1().storageClasses().withName("taken").get(), "their StorageClass is left alone");
    }

    @Test
    @Order(5)
    void deletionIsHeldWhileVolumesOfTheDriverExist() throws Exception {
        admin.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName("pv-held").endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                .withPersistentVolumeReclaimPolicy("Retain")
                .withNewCsi().withDriver(DRIVER).withVolumeHandle("vol-1").endCsi().endSpec().build()).create();
        await("allocated counts the PV", () -> "1Gi".equals(admin.resources(StoragePool.class).withName(POOL).get().getStatus().getAllocated()));
        Kubectl.ok("delete", "storagepool", POOL, "--wait=false");
        StoragePool held = await("deletion held and reported", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName(POOL).get();
            return x != null && Conditions.find(x.getStatus().getConditions(), Conditions.READY)
                    .map(c -> "DeletionBlocked".equals(c.getReason())).orElse(false) ? x : null;
        });
        String message = Conditions.find(held.getStatus().getConditions(), Conditions.READY).orElseThrow().getMessage();
        assertTrue(message.contains("1 PersistentVolume") && message.contains("pv-held"), message);
        await("DeletionBlocked Event", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && "DeletionBlocked".equals(e.getReason())
                        && e.getMessage().contains("pv-held")));
        Thread.sleep(6000);
        assertNotNull(admin.resources(StoragePool.class).withName(POOL).get(), "the finalizer still holds the pool");
        assertNotNull(admin.storage().v1().csiDrivers().withName(DRIVER).get(), "the driver keeps serving its volumes meanwhile");

        admin.persistentVolumes().withName("pv-held").delete();
        await("pool gone once its volumes are", () -> admin.resources(StoragePool.class).withName(POOL).get() == null);
        await("owned objects garbage-collected", () -> admin.storage().v1().csiDrivers().withName(DRIVER).get() == null
                && admin.storage().v1().storageClasses().withName("loopcsi-xfs").get() == null
                && admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-local-node").get() == null
                && admin.genericKubernetesResources("monitoring.coreos.com/v1", "ServiceMonitor").inNamespace(NS)
                        .withName("loopcsi-local-metrics").get() == null);
        assertNotNull(admin.storage().v1().storageClasses().withName("taken").get());
        assertTrue(Files.exists(Path.of("kubernetes/examples/storagepool.yaml")));
    }

    @Test
    @Order(6)
    void aPoolOnAnOlderPoolsDirectoryIsRefusedAndRollsOutNothing() {
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: first}
                spec: {capacityPerNode: 1Gi, backingDir: /srv/loopcsi}
                """);
        await("first pool rolled out", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-first-node").get());
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: second}
                spec: {capacityPerNode: 1Gi, backingDir: /srv/loopcsi/second/}
                """);
        StoragePool refused = await("BackingDirConflict reported", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName("second").get();
            return x.getStatus() != null && Conditions.find(x.getStatus().getConditions(), Conditions.READY)
                    .map(c -> "BackingDirConflict".equals(c.getReason())).orElse(false) ? x : null;
        });
        Condition ready = Conditions.find(refused.getStatus().getConditions(), Conditions.READY).orElseThrow();
        assertEquals("False", ready.getStatus());
        assertTrue(ready.getMessage().contains("/srv/loopcsi/second lies inside /srv/loopcsi, the backingDir of StoragePool first"),
                ready.getMessage());
        assertTrue(Conditions.isTrue(refused.getStatus().getConditions(), Conditions.DEGRADED));
        assertNull(admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-second-node").get(), "no node plugin on the directory");
        assertNull(admin.apps().deployments().inNamespace(NS).withName("loopcsi-second-controller").get());
        assertNull(admin.storage().v1().csiDrivers().withName("second.loopcsi.io").get());
        StoragePool first = admin.resources(StoragePool.class).withName("first").get();
        assertFalse(Conditions.isTrue(first.getStatus().getConditions(), Conditions.DEGRADED), "the older pool keeps working");
        await("a warning Event names the conflict", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> "second".equals(e.getInvolvedObject().getName()) && "BackingDirConflict".equals(e.getReason())));

        // a directory of its own: the pool rolls out
        Kubectl.ok("patch", "storagepool", "second", "--type", "merge", "-p", "{\"spec\": {\"backingDir\": \"/srv/loopcsi-second\"}}");
        DaemonSet node = await("second pool rolled out", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-second-node").get());
        assertTrue(node.getSpec().getTemplate().getSpec().getVolumes().stream()
                .anyMatch(v -> v.getHostPath() != null && "/srv/loopcsi-second".equals(v.getHostPath().getPath())));
        Kubectl.ok("delete", "storagepool", "first", "second");
        await("pools gone", () -> admin.resources(StoragePool.class).withName("first").get() == null
                && admin.resources(StoragePool.class).withName("second").get() == null);
    }

    @Test
    @Order(7)
    void groupSnapshotCrdsInstalledLaterAreFound() {
        // 1.20 serves no VolumeAttributesClass; the group snapshot API is external-snapshotter's CRDs. Other
        // test classes in this process install and delete them (OwnObjectsOnlyKubeTest) and the discovery
        // remembers what it saw per server: start from what the server serves now (the API server's
        // discovery drops a deleted CRD's group a moment after the CRD is gone)
        await("no group snapshot API served", () -> {
            io.loopcsi.operator.VolumeApiDiscovery.forget(admin);
            return io.loopcsi.operator.desired.VolumeApis.NONE.equals(io.loopcsi.operator.VolumeApiDiscovery.volumeApis(admin)) ? true : null;
        });
        Kubectl.apply("""
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata:
                  name: volumegroupsnapshotcontents.groupsnapshot.storage.k8s.io
                  # a *.k8s.io group: the API server wants the approval annotation, as external-snapshotter's CRDs carry
                  annotations: {api-approved.kubernetes.io: "https://github.com/kubernetes-csi/external-snapshotter/pull/1150"}
                spec:
                  group: groupsnapshot.storage.k8s.io
                  scope: Cluster
                  names: {kind: VolumeGroupSnapshotContent, plural: volumegroupsnapshotcontents, singular: volumegroupsnapshotcontent,
                          listKind: VolumeGroupSnapshotContentList}
                  # as external-snapshotter v8.6.0's CRD: v1 served beside the deprecated v1beta1
                  versions:
                    - name: v1
                      served: true
                      storage: false
                      schema:
                        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                    - name: v1beta1
                      served: true
                      storage: true
                      schema:
                        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                """);
        try {
            await("the group snapshot API found once its CRD is served", () -> io.loopcsi.operator.VolumeApiDiscovery.volumeApis(admin)
                    .groupSnapshotsV1beta1() ? true : null);
            assertTrue(io.loopcsi.operator.VolumeApiDiscovery.volumeApis(admin).groupSnapshotsV1(), "v1 too: csi-snapshotter v8.6 reads it");
            assertFalse(io.loopcsi.operator.VolumeApiDiscovery.volumeApis(admin).vacV1beta1());
        } finally {
            Kubectl.ok("delete", "crd", "volumegroupsnapshotcontents.groupsnapshot.storage.k8s.io");
        }
    }

    /** external-snapshotter's CRDs as released for Kubernetes 1.20 (v4.0.0: v1 and v1beta1 served, v1beta1 stored). */
    static final Path SNAPSHOT_CRDS_V4 = Path.of("../shared/data/sidecars/external-snapshotter-v4.0.0/client/config/crd");

    @Test
    @Order(8)
    void aPoolGetsItsVolumeSnapshotClassInTheServedVersionAndNeverTakesOneOver() throws Exception {
        assumeTrue(Files.isDirectory(SNAPSHOT_CRDS_V4), "external-snapshotter's CRDs in " + SNAPSHOT_CRDS_V4);
        String v1beta1 = "snapshot.storage.k8s.io/v1beta1";
        String v1 = "snapshot.storage.k8s.io/v1";
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: snap}
                spec: {capacityPerNode: 1Gi, backingDir: /srv/loopcsi-snap}
                """);
        StoragePool pool = await("pool without snapshot API reconciled", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName("snap").get();
            return x.getStatus() != null && Conditions.find(x.getStatus().getConditions(), Conditions.DEGRADED)
                    .map(c -> "False".equals(c.getStatus())).orElse(false) ? x : null;
        });
        assertTrue(io.loopcsi.operator.SnapshotApiDiscovery.servedVersion(admin).isEmpty(), "no snapshot CRDs yet: nothing to write, no problem");

        // the classes CRD of an older external-snapshotter: only v1beta1 served
        String classesCrd = Files.readString(SNAPSHOT_CRDS_V4.resolve("snapshot.storage.k8s.io_volumesnapshotclasses.yaml"));
        String onlyBeta = classesCrd.replace("    served: true\n    storage: false", "    served: false\n    storage: false");
        assertNotEquals(classesCrd, onlyBeta, "the v1 entry of the CRD found");
        Kubectl.apply(onlyBeta);
        var beta = await("class written as v1beta1", () -> admin.genericKubernetesResources(v1beta1, "VolumeSnapshotClass")
                .withName("snap-snapshots").get());
        assertEquals("snap.loopcsi.io", beta.getAdditionalProperties().get("driver"));
        assertEquals("Delete", beta.getAdditionalProperties().get("deletionPolicy"));
        assertOwned(beta.getMetadata().getOwnerReferences(), pool.getMetadata().getUid());
        assertNull(beta.getMetadata().getAnnotations() == null ? null
                : beta.getMetadata().getAnnotations().get("snapshot.storage.k8s.io/is-default-class"));

        // external-snapshotter v4.0.0's CRDs as released: v1 is served, and the operator writes v1 from then on
        Kubectl.ok("apply", "-f", SNAPSHOT_CRDS_V4.toString());
        await("v1 served", () -> io.loopcsi.operator.SnapshotApiDiscovery.servedVersion(admin).filter("v1"::equals).isPresent());
        Kubectl.ok("patch", "storagepool", "snap", "--type", "merge", "-p", "{\"spec\": {\"snapshots\": {\"defaultClass\": true}}}");
        var def = await("the default class, applied in v1", () -> {
            var c = admin.genericKubernetesResources(v1, "VolumeSnapshotClass").withName("snap-snapshots").get();
            return c.getMetadata().getAnnotations() != null && "true".equals(c.getMetadata().getAnnotations()
                    .get("snapshot.storage.k8s.io/is-default-class")) ? c : null;
        });
        assertTrue(def.getMetadata().getManagedFields().stream().anyMatch(m -> "loopcsi-operator".equals(m.getManager())
                && v1.equals(m.getApiVersion())), "applied through v1: " + def.getMetadata().getManagedFields());
        Kubectl.ok("get", "volumesnapshotclass", "snap-snapshots"); // what a user sees

        // a class of the wanted name that the pool does not own: NameConflict, theirs untouched
        Kubectl.apply("""
                apiVersion: snapshot.storage.k8s.io/v1
                kind: VolumeSnapshotClass
                metadata: {name: their-snaps}
                driver: someone.else.io
                deletionPolicy: Retain
                """);
        Kubectl.ok("patch", "storagepool", "snap", "--type", "merge", "-p", "{\"spec\": {\"snapshots\": {\"className\": \"their-snaps\"}}}");
        StoragePool conflict = await("NameConflict for the snapshot class", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName("snap").get();
            return Conditions.find(x.getStatus().getConditions(), Conditions.READY).map(c -> "NameConflict".equals(c.getReason())).orElse(false)
                    ? x : null;
        });
        String message = Conditions.find(conflict.getStatus().getConditions(), Conditions.READY).orElseThrow().getMessage();
        assertTrue(message.contains("VolumeSnapshotClass their-snaps"), message);
        var theirs = admin.genericKubernetesResources(v1, "VolumeSnapshotClass").withName("their-snaps").get();
        assertEquals("someone.else.io", theirs.getAdditionalProperties().get("driver"));
        assertEquals("Retain", theirs.getAdditionalProperties().get("deletionPolicy"));
        assertTrue(theirs.getMetadata().getOwnerReferences() == null || theirs.getMetadata().getOwnerReferences().isEmpty());

        // renamed: the new class is written and the pool's old one goes
        Kubectl.ok("patch", "storagepool", "snap", "--type", "merge", "-p", "{\"spec\": {\"snapshots\": {\"className\": \"snap-copies\"}}}");
        await("renamed class", () -> admin.genericKubernetesResources(v1, "VolumeSnapshotClass").withName("snap-copies").get());
        await("the old name removed", () -> admin.genericKubernetesResources(v1, "VolumeSnapshotClass").withName("snap-snapshots").get() == null);

        Kubectl.ok("delete", "storagepool", "snap");
        await("the class goes with the pool", () -> admin.genericKubernetesResources(v1, "VolumeSnapshotClass").withName("snap-copies").get() == null);
        assertNotNull(admin.genericKubernetesResources(v1, "VolumeSnapshotClass").withName("their-snaps").get(), "theirs is left alone");
    }

    @Test
    @Order(9)
    void aLimitTheRoleCannotRunInIsRefusedAndTheRunningWorkloadsStay() {
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: sized}
                spec:
                  capacityPerNode: 1Gi
                  backingDir: /srv/loopcsi-sized
                  resources:
                    node: {limits: {memory: 384Mi}}
                """);
        DaemonSet before = await("node DaemonSet with the pool's limit", () -> {
            DaemonSet d = admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-sized-node").get();
            return d != null && "384Mi".equals(d.getSpec().getTemplate().getSpec().getContainers().get(0).getResources().getLimits()
                    .get("memory").toString()) ? d : null;
        });
        Deployment controllerBefore = await("controller Deployment", () -> admin.apps().deployments().inNamespace(NS)
                .withName("loopcsi-sized-controller").get());
        var defaults = controllerBefore.getSpec().getTemplate().getSpec().getContainers();
        assertEquals("256Mi", defaults.get(0).getResources().getLimits().get("memory").toString(), "the controller's default limit");
        assertTrue(defaults.stream().allMatch(c -> c.getResources().getLimits().get("memory") != null), "every container has a limit");
        await("pool Ready=True or at least reconciled", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName("sized").get();
            return x.getStatus() != null && Long.valueOf(1).equals(x.getStatus().getObservedGeneration());
        });

        // a node limit below what the role runs in, and a sidecar limit below its request
        Kubectl.ok("patch", "storagepool", "sized", "--type", "merge", "-p", """
                {"spec": {"images": {"loopcsiNative": "example.org/loopcsi:next-native"},
                          "resources": {"node": {"limits": {"memory": "50Mi"}},
                                        "sidecars": {"requests": {"memory": "64Mi"}, "limits": {"memory": "48Mi"}}}}}
                """);
        StoragePool refused = await("InvalidResources reported", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName("sized").get();
            return x.getStatus() != null && Conditions.find(x.getStatus().getConditions(), Conditions.READY)
                    .map(c -> "InvalidResources".equals(c.getReason())).orElse(false) ? x : null;
        });
        Condition ready = Conditions.find(refused.getStatus().getConditions(), Conditions.READY).orElseThrow();
        assertEquals("False", ready.getStatus());
        assertTrue(ready.getMessage().contains("spec.resources.node.limits.memory (50Mi) is below 64Mi"), ready.getMessage());
        assertTrue(ready.getMessage().contains("spec.resources.sidecars.limits.memory (48Mi) is below spec.resources.sidecars.requests.memory"
                + " (64Mi)"), ready.getMessage());
        assertTrue(Conditions.isTrue(refused.getStatus().getConditions(), Conditions.DEGRADED));
        await("a warning Event names it", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> "sized".equals(e.getInvolvedObject().getName()) && "InvalidResources".equals(e.getReason())));
        // the workloads are as they were: neither the bad limits nor the image change of the same patch
        DaemonSet after = admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-sized-node").get();
        assertEquals(before.getMetadata().getGeneration(), after.getMetadata().getGeneration(), "the DaemonSet was not updated");
        assertEquals(before.getSpec().getTemplate(), after.getSpec().getTemplate());
        Deployment controllerAfter = admin.apps().deployments().inNamespace(NS).withName("loopcsi-sized-controller").get();
        assertEquals(controllerBefore.getMetadata().getGeneration(), controllerAfter.getMetadata().getGeneration(),
                "the Deployment was not updated");

        // mended: the spec rolls out
        Kubectl.ok("patch", "storagepool", "sized", "--type", "merge", "-p", """
                {"spec": {"resources": {"node": {"limits": {"memory": "512Mi"}}, "sidecars": {"limits": {"memory": "128Mi"}}}}}
                """);
        await("DaemonSet rolled with the mended limit and the image", () -> {
            var c = admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-sized-node").get().getSpec().getTemplate().getSpec()
                    .getContainers().get(0);
            return "512Mi".equals(c.getResources().getLimits().get("memory").toString()) && "example.org/loopcsi:next-native".equals(c.getImage());
        });
        await("Degraded cleared", () -> !Conditions.isTrue(admin.resources(StoragePool.class).withName("sized").get().getStatus()
                .getConditions(), Conditions.DEGRADED));
        Kubectl.ok("delete", "storagepool", "sized");
        await("pool gone", () -> admin.resources(StoragePool.class).withName("sized").get() == null);
    }

    /**
     * The node pods serve transfers as the operator deploys them (issue 35): the API server takes
     * the DaemonSet with its port, its pod-IP env and its projected token (600 s: the least it
     * accepts), and the node's ServiceAccount may do what the transfer server does with a caller
     * (TokenReview of a token of audience loopcsi.io/transfer, the caller's Pod, LoopTransfers,
     * the pool's LoopPoolNodes). A bad cap is refused naming the field, the DaemonSet left as it
     * was; spec.transfer.enabled: false takes it all out.
     */
    @Test
    @Order(11)
    void theNodePodsServeTransfersWithAProjectedTokenTheirAccountMayReview() {
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: moving}
                spec:
                  capacityPerNode: 1Gi
                  backingDir: /srv/loopcsi-moving
                """);
        DaemonSet ds = await("node DaemonSet", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-moving-node").get());
        var pod = ds.getSpec().getTemplate().getSpec();
        var node = pod.getContainers().get(0);
        assertTrue(node.getPorts().stream().anyMatch(p -> "transfer".equals(p.getName()) && p.getContainerPort() == 9810), node.getPorts().toString());
        Map<String, String> env = new java.util.HashMap<>();
        node.getEnv().forEach(e -> env.put(e.getName(), e.getValue() != null ? e.getValue() : e.getValueFrom().getFieldRef() != null
                ? "field:" + e.getValueFrom().getFieldRef().getFieldPath() : "other"));
        assertEquals("field:status.podIP", env.get("POD_IP"));
        assertEquals("$(POD_IP):9810", env.get("LOOPCSI_NODE_TRANSFER_ADVERTISE_ADDRESS"));
        assertEquals(NS, env.get("LOOPCSI_NODE_TRANSFER_NAMESPACE"));
        assertEquals("loopcsi-moving-node", env.get("LOOPCSI_NODE_TRANSFER_NODE_ACCOUNT"));
        var token = pod.getVolumes().stream().filter(v -> v.getName().equals("transfer-token")).findFirst().orElseThrow().getProjected()
                .getSources().get(0).getServiceAccountToken();
        assertEquals("loopcsi.io/transfer", token.getAudience());
        assertEquals(600L, token.getExpirationSeconds());
        // the server's own check of the least lifetime, which the operator's 600 s meets
        KubernetesClientException shorter = assertThrows(KubernetesClientException.class, () -> admin.apps().daemonSets().inNamespace(NS)
                .resource(new io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder(ds).editMetadata().withName("short-token")
                        .withResourceVersion(null).withUid(null).withOwnerReferences(List.of()).endMetadata().editSpec().editTemplate()
                        .editSpec().editMatchingVolume(v -> v.getName().equals("transfer-token")).editProjected().editFirstSource()
                        .editServiceAccountToken().withExpirationSeconds(599L).endServiceAccountToken().endSource().endProjected().endVolume()
                        .endSpec().endTemplate().endSpec().build()).create());
        assertTrue(shorter.getMessage().contains("expirationSeconds"), shorter.getMessage());

        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername("system:serviceaccount:" + NS + ":loopcsi-moving-node");
        try (KubernetesClient asNode = new KubernetesClientBuilder().withConfig(cfg).build()) {
            await("the node account's ServiceAccount", () -> admin.serviceAccounts().inNamespace(NS).withName("loopcsi-moving-node").get());
            String jwt = admin.serviceAccounts().inNamespace(NS).withName("loopcsi-moving-node").tokenRequest(
                            new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder().withNewSpec()
                                    .withAudiences("loopcsi.io/transfer").withExpirationSeconds(600L).endSpec().build()).getStatus().getToken();
            var review = asNode.authentication().v1().tokenReviews().create(new io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder()
                    .withNewSpec().withToken(jwt).withAudiences("loopcsi.io/transfer").endSpec().build());
            assertTrue(review.getStatus().getAuthenticated(), "the node account reviews a caller's token: " + review.getStatus());
            assertEquals("system:serviceaccount:" + NS + ":loopcsi-moving-node", review.getStatus().getUser().getUsername());
            asNode.pods().inNamespace(NS).withName("any").get(); // null, not 403
            asNode.resources(io.loopcsi.handoff.LoopTransfer.class).list();
            asNode.resources(io.loopcsi.handoff.LoopPoolNode.class).list();
            assertEquals(403, assertThrows(KubernetesClientException.class, () -> asNode.pods().inNamespace(NS).list()).getCode(),
                    "a pod by name, not the list of them");
        }

        Kubectl.ok("patch", "storagepool", "moving", "--type", "merge", "-p", "{\"spec\": {\"transfer\": {\"bandwidthPerNode\": \"100k\"}}}");
        StoragePool refused = await("InvalidTransfer reported", () -> {
            StoragePool x = admin.resources(StoragePool.class).withName("moving").get();
            return x.getStatus() != null && Conditions.find(x.getStatus().getConditions(), Conditions.READY)
                    .map(c -> "InvalidTransfer".equals(c.getReason())).orElse(false) ? x : null;
        });
        assertTrue(Conditions.find(refused.getStatus().getConditions(), Conditions.READY).orElseThrow().getMessage()
                .contains("spec.transfer.bandwidthPerNode (100k) is below 1Mi"));
        assertEquals(ds.getSpec().getTemplate(), admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-moving-node").get().getSpec()
                .getTemplate(), "the running node pods are left as they are");
        assertNotEquals(0, Kubectl.tryApply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: moving}
                spec: {capacityPerNode: 1Gi, backingDir: /srv/loopcsi-moving, transfer: {maxConcurrentPerNode: 0}}
                """).exit(), "the schema refuses a concurrency below 1");

        Kubectl.ok("patch", "storagepool", "moving", "--type", "merge", "-p",
                "{\"spec\": {\"transfer\": {\"enabled\": false, \"bandwidthPerNode\": \"50Mi\"}}}");
        await("the node pods without the transfer", () -> {
            var c = admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-moving-node").get().getSpec().getTemplate().getSpec();
            return c.getVolumes().stream().noneMatch(v -> v.getName().equals("transfer-token"))
                    && c.getContainers().get(0).getPorts().stream().noneMatch(p -> "transfer".equals(p.getName()));
        });
        Kubectl.ok("delete", "storagepool", "moving");
        await("pool gone", () -> admin.resources(StoragePool.class).withName("moving").get() == null);
    }

    /** external-snapshotter v8.6.0's CRDs (the release the 1.36 check ran): groupsnapshot.storage.k8s.io v1, v1beta2, v1beta1. */
    static final Path SNAPSHOT_CRDS_V8_6 = Path.of("../shared/data/sidecars/external-snapshotter-v8.6.0/client/config/crd");
    static final List<String> GROUP_SNAPSHOT_CRDS = List.of("volumegroupsnapshotclasses", "volumegroupsnapshotcontents", "volumegroupsnapshots");

    @Test
    @Order(10)
    void theClassesOfOptionalApisAppearWhereServedAndGoWithThePool() throws Exception {
        assumeTrue(Files.isDirectory(SNAPSHOT_CRDS_V8_6), "external-snapshotter's CRDs in " + SNAPSHOT_CRDS_V8_6);
        String v1 = "groupsnapshot.storage.k8s.io/v1";
        // 1.20 serves no VolumeAttributesClass, and a CRD of that name in storage.k8s.io is Established but not
        // served (the built-in group versions answer first): the operator must neither write one nor fail
        Kubectl.apply("""
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata:
                  name: volumeattributesclasses.storage.k8s.io
                  annotations: {api-approved.kubernetes.io: "https://github.com/kubernetes/enhancements/pull/3780"}
                spec:
                  group: storage.k8s.io
                  scope: Cluster
                  names: {kind: VolumeAttributesClass, plural: volumeattributesclasses, singular: volumeattributesclass,
                          listKind: VolumeAttributesClassList}
                  versions:
                    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
                    - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
                """);
        try {
            await("VolumeAttributesClass CRD established", () -> admin.apiextensions().v1().customResourceDefinitions()
                    .withName("volumeattributesclasses.storage.k8s.io").get().getStatus().getConditions().stream()
                    .anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
            Kubectl.apply("""
                    apiVersion: loopcsi.io/v1alpha1
                    kind: StoragePool
                    metadata: {name: groups}
                    spec: {capacityPerNode: 1Gi, backingDir: /srv/loopcsi-groups}
                    """);
            StoragePool pool = await("pool without the optional APIs reconciled, not degraded", () -> {
                StoragePool x = admin.resources(StoragePool.class).withName("groups").get();
                return x.getStatus() != null && x.getStatus().getManagedObjects() != null
                        && Conditions.find(x.getStatus().getConditions(), Conditions.DEGRADED).map(c -> "False".equals(c.getStatus())).orElse(false)
                                ? x : null;
            });
            assertTrue(io.loopcsi.operator.ClassApiDiscovery.VOLUME_ATTRIBUTES_CLASSES.servedVersion(admin).isEmpty());
            assertTrue(io.loopcsi.operator.ClassApiDiscovery.GROUP_SNAPSHOT_CLASSES.servedVersion(admin).isEmpty());
            assertTrue(pool.getStatus().getManagedObjects().stream()
                    .noneMatch(m -> m.getKind().equals("VolumeAttributesClass") || m.getKind().equals("VolumeGroupSnapshotClass")),
                    pool.getStatus().getManagedObjects().toString());

            // a release that serves the classes in v1beta1 only (v8.2): the class is written in v1beta1
            var classesCrd = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(Files.readString(SNAPSHOT_CRDS_V8_6
                    .resolve("groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml")),
                    io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition.class);
            classesCrd.getSpec().getVersions().forEach(v -> v.setServed("v1beta1".equals(v.getName())));
            Kubectl.ok("apply", "--validate=false", "-f", Files.writeString(Files.createTempFile("vgsclass-crd", ".yaml"),
                    io.fabric8.kubernetes.client.utils.Serialization.asYaml(classesCrd)).toString());
            var beta = await("the class written in v1beta1, the only version served", () -> admin.genericKubernetesResources(
                    "groupsnapshot.storage.k8s.io/v1beta1", "VolumeGroupSnapshotClass").withName("groups-group-snapshots").get());
            assertEquals("groups.loopcsi.io", beta.getAdditionalProperties().get("driver"));
            assertTrue(beta.getMetadata().getManagedFields().stream().anyMatch(m -> "loopcsi-operator".equals(m.getManager())
                    && "groupsnapshot.storage.k8s.io/v1beta1".equals(m.getApiVersion())), "applied through v1beta1");

            // external-snapshotter's group snapshot CRDs as an admin installs them (--validate=false: their CEL rules are
            // newer than 1.20's CRD schema, which drops them)
            for (String crd : GROUP_SNAPSHOT_CRDS) {
                Kubectl.ok("apply", "--validate=false", "-f", SNAPSHOT_CRDS_V8_6.resolve("groupsnapshot.storage.k8s.io_" + crd + ".yaml").toString());
            }
            var made = await("the class applied through v1, the newest served", () -> {
                var c = admin.genericKubernetesResources(v1, "VolumeGroupSnapshotClass").withName("groups-group-snapshots").get();
                return c.getMetadata().getManagedFields().stream().anyMatch(m -> "loopcsi-operator".equals(m.getManager())
                        && v1.equals(m.getApiVersion())) ? c : null;
            });
            assertEquals(beta.getMetadata().getUid(), made.getMetadata().getUid(), "the same class");
            assertEquals("groups.loopcsi.io", made.getAdditionalProperties().get("driver"));
            assertEquals("Delete", made.getAdditionalProperties().get("deletionPolicy"));
            assertOwned(made.getMetadata().getOwnerReferences(), pool.getMetadata().getUid());
            assertTrue(Kubectl.ok("get", "vgsclass").contains("groups-group-snapshots"), "what a user sees");
            await("the class in the pool's record, by UID", () -> admin.resources(StoragePool.class).withName("groups").get().getStatus()
                    .getManagedObjects().stream().anyMatch(m -> m.getKind().equals("VolumeGroupSnapshotClass")
                            && m.getName().equals("groups-group-snapshots") && made.getMetadata().getUid().equals(m.getUid())) ? true : null);

            // a user's copy (kubectl get -o yaml, renamed): listed as such, left alone when the pool goes
            var copy = admin.genericKubernetesResources(v1, "VolumeGroupSnapshotClass").withName("groups-group-snapshots").get();
            copy.getMetadata().setName("groups-copy");
            copy.getMetadata().setUid(null);
            copy.getMetadata().setResourceVersion(null);
            copy.getMetadata().setCreationTimestamp(null);
            copy.getMetadata().setManagedFields(null);
            Kubectl.create(io.fabric8.kubernetes.client.utils.Serialization.asYaml(copy));
            await("the copy listed in status", () -> {
                var c = admin.resources(StoragePool.class).withName("groups").get().getStatus().getUnmanagedCopies();
                return c != null && c.contains("VolumeGroupSnapshotClass groups-copy") ? true : null;
            });

            // a class at the name a pool wants that the pool did not make: never taken over, left alone,
            // named in ClassesSkipped; the pool is not stopped for it (an upgrade meets hand-made ones)
            Kubectl.apply("""
                    apiVersion: groupsnapshot.storage.k8s.io/v1
                    kind: VolumeGroupSnapshotClass
                    metadata: {name: late-group-snapshots}
                    driver: someone.else.io
                    deletionPolicy: Retain
                    """);
            Kubectl.apply("""
                    apiVersion: loopcsi.io/v1alpha1
                    kind: StoragePool
                    metadata: {name: late}
                    spec: {capacityPerNode: 1Gi, backingDir: /srv/loopcsi-late}
                    """);
            StoragePool skipped = await("ClassesSkipped for the group snapshot class", () -> {
                StoragePool x = admin.resources(StoragePool.class).withName("late").get();
                return x.getStatus() != null && Conditions.isTrue(x.getStatus().getConditions(), StoragePoolReconciler.CLASSES_SKIPPED) ? x : null;
            });
            String message = Conditions.find(skipped.getStatus().getConditions(), StoragePoolReconciler.CLASSES_SKIPPED).orElseThrow().getMessage();
            assertTrue(message.contains("VolumeGroupSnapshotClass late-group-snapshots"), message);
            assertTrue(Conditions.find(skipped.getStatus().getConditions(), Conditions.READY).map(c -> !"NameConflict".equals(c.getReason()))
                    .orElse(true), "the pool is not stopped for it");
            await("the pool's workloads made", () -> admin.apps().daemonSets().inNamespace(NS).withName("loopcsi-late-node").get());
            Kubectl.ok("delete", "storagepool", "late");
            await("pool late gone", () -> admin.resources(StoragePool.class).withName("late").get() == null);
            var theirs = admin.genericKubernetesResources(v1, "VolumeGroupSnapshotClass").withName("late-group-snapshots").get();
            assertEquals("someone.else.io", theirs.getAdditionalProperties().get("driver"), "theirs untouched");
            assertEquals("Retain", theirs.getAdditionalProperties().get("deletionPolicy"));

            Kubectl.ok("delete", "storagepool", "groups");
            await("the class goes with the pool", () -> admin.genericKubernetesResources(v1, "VolumeGroupSnapshotClass")
                    .withName("groups-group-snapshots").get() == null);
            var kept = admin.genericKubernetesResources(v1, "VolumeGroupSnapshotClass").withName("groups-copy").get();
            assertNotNull(kept, "the copy is left alone");
            assertTrue(kept.getMetadata().getOwnerReferences() == null || kept.getMetadata().getOwnerReferences().stream()
                    .noneMatch(r -> pool.getMetadata().getUid().equals(r.getUid())), "the pool's owner reference taken off the copy");
        } finally {
            Kubectl.run("delete", "storagepool", "groups", "--ignore-not-found");
            Kubectl.run("delete", "storagepool", "late", "--ignore-not-found");
            Kubectl.run("delete", "vgsclass", "groups-copy", "late-group-snapshots", "--ignore-not-found");
            for (String crd : GROUP_SNAPSHOT_CRDS) {
                Kubectl.run("delete", "crd", crd + ".groupsnapshot.storage.k8s.io", "--ignore-not-found");
            }
            Kubectl.run("delete", "crd", "volumeattributesclasses.storage.k8s.io", "--ignore-not-found");
        }
    }

    static void assertOwned(List<OwnerReference> refs, String uid) {
        assertTrue(refs != null && refs.stream().anyMatch(r -> uid.equals(r.getUid()) && "StoragePool".equals(r.getKind())), "owned by the pool: " + refs);
    }

    /** Polls until the supplier returns a non-null, non-false value; fails after {@link #WAIT}. */
    @SuppressWarnings("unchecked")
    static <T> T await(String what, Supplier<T> check) {
        return await(what, WAIT, check);
    }

    /**
     * The first non-null, non-false answer of check, asked for up to wait: at once, then after 20 ms,
     * the pause doubling to at most 500 ms. Most conditions hold within a few hundred ms (an informer's
     * event, a node's status write): a fixed 500 ms pause spent most of that on the sleep, a second per
     * create+delete pair in the e2e churn (200 pairs); a condition that takes long is still asked only
     * every 500 ms.
     */
    public static <T> T await(String what, Duration wait, Supplier<T> check) {
        long deadline = System.nanoTime() + wait.toNanos();
        Throwable last = null;
        long pause = 20;
        while (System.nanoTime() < deadline) {
            try {
                T v = check.get();
                if (v != null && !Boolean.FALSE.equals(v)) {
                    return v;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            pause = Math.min(500, pause * 2);
        }
        throw new AssertionError("timed out waiting for: " + what + (last == null ? "" : " (last error: " + last + ")"));
    }
}
