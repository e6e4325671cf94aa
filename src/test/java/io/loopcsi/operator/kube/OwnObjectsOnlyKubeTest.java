package io.loopcsi.operator.kube;

import static io.loopcsi.operator.kube.StoragePoolOperatorKubeTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.operator.api.ManagedObject;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.status.Conditions;

/**
 * The operator deletes only what it made (issue #34, part 1), on a REAL kube-apiserver with
 * kube-controller-manager (garbage collection): a copy of each kind of object a pool makes, taken
 * as users take one (kubectl get -o yaml, renamed, uid and resourceVersion dropped, created: labels,
 * owner reference and JOSDK's annotation kept), survives a reconcile, a spec change, an operator
 * restart, an upgrade from a release without the record, and the pool's deletion. A class removed
 * from the spec while a claim uses it is kept and named in a condition. The operator runs in this
 * JVM as its ServiceAccount (the committed RBAC), as in {@link StoragePoolOperatorKubeTest}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class OwnObjectsOnlyKubeTest {

    static final String NS = StoragePoolOperatorKubeTest.NS;
    static final String POOL = "own";
    static final Path SNAPSHOT_CRDS = StoragePoolOperatorKubeTest.SNAPSHOT_CRDS_V4;
    /** apiVersion of each kind a pool makes (every kind the operator manages). */
    static final Map<String, String> KINDS = new LinkedHashMap<>();
    static {
        KINDS.put("CSIDriver", "storage.k8s.io/v1");
        KINDS.put("ServiceAccount", "v1");
        KINDS.put("ClusterRole", "rbac.authorization.k8s.io/v1");
        KINDS.put("ClusterRoleBinding", "rbac.authorization.k8s.io/v1");
        KINDS.put("Role", "rbac.authorization.k8s.io/v1");
        KINDS.put("RoleBinding", "rbac.authorization.k8s.io/v1");
        KINDS.put("Deployment", "apps/v1");
        KINDS.put("DaemonSet", "apps/v1");
        KINDS.put("StorageClass", "storage.k8s.io/v1");
        KINDS.put("Service", "v1");
        KINDS.put("ConfigMap", "v1");
        KINDS.put("ServiceMonitor", "monitoring.coreos.com/v1");
        KINDS.put("PrometheusRule", "monitoring.coreos.com/v1");
        KINDS.put("VolumeSnapshotClass", "snapshot.storage.k8s.io/v1");
        KINDS.put("VolumeGroupSnapshotClass", "groupsnapshot.storage.k8s.io/v1");
        // VolumeAttributesClass: 1.20 serves none (nor a CRD of that name in storage.k8s.io), so it is not here
    }

    static KubernetesClient admin;
    static KubernetesClient asOperator;
    static Operator operator;
    /** The copies made, "Kind [ns/]name". */
    static final List<ManagedObject> copies = new ArrayList<>();

    @BeforeAll
    static void installAndStart() {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        assumeTrue(configured, "no test cluster: set LOOPCSI_KUBE_TEST=1 and KUBECONFIG (bash .ci/kube-test.sh)");
        assumeTrue(Files.isDirectory(SNAPSHOT_CRDS), "external-snapshotter's CRDs in " + SNAPSHOT_CRDS);
        assumeTrue(Files.isDirectory(StoragePoolOperatorKubeTest.SNAPSHOT_CRDS_V8_6), "external-snapshotter's CRDs in "
                + StoragePoolOperatorKubeTest.SNAPSHOT_CRDS_V8_6);
        Kubectl.ok("apply", "-k", "kubernetes/");
        Kubectl.ok("apply", "-f", SNAPSHOT_CRDS.toString());
        for (String crd : StoragePoolOperatorKubeTest.GROUP_SNAPSHOT_CRDS) {
            Kubectl.ok("apply", "--validate=false", "-f", groupSnapshotCrd(crd));
        }
        for (String[] crd : List.of(new String[] { "ServiceMonitor", "servicemonitors" }, new String[] { "PrometheusRule", "prometheusrules" })) {
            Kubectl.apply("""
                    apiVersion: apiextensions.k8s.io/v1
                    kind: CustomResourceDefinition
                    metadata: {name: %2$s.monitoring.coreos.com}
                    spec:
                      group: monitoring.coreos.com
                      scope: Namespaced
                      names: {kind: %1$s, plural: %2$s, listKind: %1$sList}
                      versions:
                        - name: v1
                          served: true
                          storage: true
                          schema:
                            openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                    """.formatted(crd[0], crd[1]));
        }
        admin = new KubernetesClientBuilder().build();
        for (String crd : List.of("storagepools.loopcsi.io", "servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com",
                "volumesnapshotclasses.snapshot.storage.k8s.io", "volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io")) {
            await(crd + " established", () -> admin.apiextensions().v1().customResourceDefinitions().withName(crd).get()
                    .getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        }
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername(StoragePoolOperatorKubeTest.SA);
        asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        // what the pool's informers do not see (a copy made by a user, a claim that goes, a class's users)
        // the operator finds at its periodic reconcile: 3 s here instead of 30 s, as in StoragePoolOperatorKubeTest
        System.setProperty(OperatorSettings.RECHECK_PROPERTY, StoragePoolOperatorKubeTest.RECHECK);
        startOperator();
    }

    static void startOperator() {
        operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
        operator.register(new StoragePoolReconciler());
        operator.start();
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.stop();
        }
        System.clearProperty(OperatorSettings.RECHECK_PROPERTY);
        // the other operator tests on this API server expect no snapshot API and none of these copies
        if (admin != null) {
            for (ManagedObject c : copies) {
                var op = admin.genericKubernetesResources(KINDS.get(c.getKind()), c.getKind());
                (c.getNamespace() == null || c.getNamespace().isEmpty() ? op.withName(c.getName()) : op.inNamespace(c.getNamespace())
                        .withName(c.getName())).delete();
            }
            Kubectl.run("delete", "-f", SNAPSHOT_CRDS.toString(), "--ignore-not-found");
            for (String crd : StoragePoolOperatorKubeTest.GROUP_SNAPSHOT_CRDS) {
                Kubectl.run("delete", "-f", groupSnapshotCrd(crd), "--ignore-not-found");
            }
        }
        if (asOperator != null) {
            asOperator.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    /** external-snapshotter v8.6.0's CRD of one group snapshot kind (its CEL rules are newer than 1.20: --validate=false). */
    static String groupSnapshotCrd(String plural) {
        return StoragePoolOperatorKubeTest.SNAPSHOT_CRDS_V8_6.resolve("groupsnapshot.storage.k8s.io_" + plural + ".yaml").toString();
    }

    static StoragePool pool() {
        return admin.resources(StoragePool.class).withName(POOL).get();
    }

    static StoragePool reconciledAt(long generation) {
        return await("pool reconciled at generation " + generation, () -> {
            StoragePool p = pool();
            return p.getStatus() != null && Long.valueOf(generation).equals(p.getStatus().getObservedGeneration()) ? p : null;
        });
    }

    static GenericKubernetesResource get(ManagedObject m) {
        var op = admin.genericKubernetesResources(KINDS.get(m.getKind()), m.getKind());
        return m.getNamespace() == null || m.getNamespace().isEmpty() ? op.withName(m.getName()).get()
                : op.inNamespace(m.getNamespace()).withName(m.getName()).get();
    }

    static void assertCopiesIntact(String when) {
        for (ManagedObject c : copies) {
            GenericKubernetesResource now = get(c);
            assertNotNull(now, c.describe() + " survives " + when);
            assertEquals(c.getUid(), now.getMetadata().getUid(), c.describe() + " is the same object after " + when);
        }
    }

    @Test
    @Order(1)
    void everyKindRecordedByUid() {
        Kubectl.apply("""
                apiVersion: loopcsi.io/v1alpha1
                kind: StoragePool
                metadata: {name: own}
                spec:
                  capacityPerNode: 1Gi
                  backingDir: /srv/loopcsi-own
                  storageClasses: [{name: own-xfs, isDefault: false}, {name: own-block, volumeMode: Block}, {name: own-ext, fsType: ext4}]
                  monitoring: {grafanaDashboard: true}
                """);
        StoragePool p = await("every kind recorded", () -> {
            StoragePool x = pool();
            if (x.getStatus() == null || x.getStatus().getManagedObjects() == null) {
                return null;
            }
            Set<String> kinds = x.getStatus().getManagedObjects().stream().map(ManagedObject::getKind).collect(Collectors.toSet());
            return kinds.containsAll(KINDS.keySet()) ? x : null;
        });
        for (ManagedObject m : p.getStatus().getManagedObjects()) {
            GenericKubernetesResource o = get(m);
            assertNotNull(o, m.describe());
            assertEquals(m.getUid(), o.getMetadata().getUid(), m.describe() + ": the record names the object by its UID");
        }
        assertEquals(3, p.getStatus().getManagedObjects().stream().filter(m -> m.getKind().equals("StorageClass")).count());
    }

    /** What `kubectl get KIND NAME -o yaml`, a new name, dropping uid/resourceVersion, and `kubectl create` make. */
    static ManagedObject copy(ManagedObject of) {
        String yaml = Kubectl.ok("get", of.getKind().toLowerCase() + "." + group(of.getKind()), of.getName(), "-o", "yaml",
                "-n", of.getNamespace() == null || of.getNamespace().isEmpty() ? "default" : of.getNamespace());
        GenericKubernetesResource g = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(yaml, GenericKubernetesResource.class);
        String name = "copy-" + of.getName();
        g.getMetadata().setName(name);
        g.getMetadata().setUid(null);
        g.getMetadata().setResourceVersion(null);
        g.getMetadata().setCreationTimestamp(null);
        g.getMetadata().setManagedFields(null);
        g.getMetadata().setGeneration(null);
        assertFalse(g.getMetadata().getOwnerReferences() == null || g.getMetadata().getOwnerReferences().isEmpty(),
                "the copy keeps the pool's owner reference: " + of.describe());
        if (of.getKind().equals("Service")) {
            @SuppressWarnings("unchecked")
            Map<String, Object> spec = (Map<String, Object>) g.getAdditionalProperties().get("spec");
            spec.remove("clusterIP"); // allocated per Service; a user drops it too
            spec.remove("clusterIPs");
        }
        g.getAdditionalProperties().remove("status");
        Kubectl.create(io.fabric8.kubernetes.client.utils.Serialization.asYaml(g));
        ManagedObject c = new ManagedObject(of.getKind(), of.getNamespace(), name, null);
        c.setUid(get(c).getMetadata().getUid());
        return c;
    }

    static String group(String kind) {
        String api = KINDS.get(kind);
        return api.contains("/") ? api.substring(0, api.lastIndexOf('/')) : "";
    }

    @Test
    @Order(2)
    void aCopyOfEachKindSurvivesAReconcileAndASpecChange() {
        StoragePool p = pool();
        Map<String, ManagedObject> oneOfEach = new LinkedHashMap<>();
        for (ManagedObject m : p.getStatus().getManagedObjects()) {
            oneOfEach.putIfAbsent(m.getKind(), m);
        }
        // the classes: one that stays in the spec and one that the spec change below removes
        oneOfEach.put("StorageClass", p.getStatus().getManagedObjects().stream().filter(m -> m.getName().equals("own-xfs")).findFirst().orElseThrow());
        for (ManagedObject m : oneOfEach.values()) {
            copies.add(copy(m));
        }
        copies.add(copy(p.getStatus().getManagedObjects().stream().filter(m -> m.getName().equals("own-block")).findFirst().orElseThrow()));
        List<String> described = copies.stream().map(ManagedObject::describe).sorted().toList();
        StoragePool reported = await("copies reported in status", () -> {
            StoragePool x = pool();
            return x.getStatus().getUnmanagedCopies() != null && x.getStatus().getUnmanagedCopies().containsAll(described) ? x : null;
        });
        assertEquals(described, reported.getStatus().getUnmanagedCopies());
        await("an UnmanagedCopy Event names a copy", () -> admin.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(e -> POOL.equals(e.getInvolvedObject().getName()) && StoragePoolReconciler.UNMANAGED_COPY.equals(e.getReason())
                        && e.getMessage().contains("StorageClass copy-own-xfs")));
        assertCopiesIntact("reconciles");

        long gen = pool().getMetadata().getGeneration();
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", """
                {"spec": {"storageClasses": [{"name": "own-xfs"}, {"name": "own-ext", "fsType": "ext4"}],
                          "snapshots": {"className": "own-snaps-renamed"},
                          "monitoring": {"grafanaDashboard": false}}}
                """);
        reconciledAt(gen + 1);
        await("the pool's removed class deleted", () -> admin.storage().v1().storageClasses().withName("own-block").get() == null);
        await("the pool's dashboard deleted", () -> admin.configMaps().inNamespace(NS).withName("loopcsi-own-dashboard").get() == null);
        await("the pool's renamed VolumeSnapshotClass deleted", () -> admin.genericKubernetesResources("snapshot.storage.k8s.io/v1",
                "VolumeSnapshotClass").withName("own-snapshots").get() == null);
        assertCopiesIntact("a spec change that deleted their originals");
    }

    @Test
    @Order(3)
    void aClassInUseIsKeptWithACondition() {
        // as the e2e suite's driver definition does: a class made from the pool's, claims on both
        admin.persistentVolumeClaims().inNamespace("default").resource(new PersistentVolumeClaimBuilder().withNewMetadata().withName("data")
                .endMetadata().withNewSpec().withStorageClassName("own-ext").withAccessModes("ReadWriteOnce")
                .withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build()).create();
        admin.persistentVolumeClaims().inNamespace("default").resource(new PersistentVolumeClaimBuilder().withNewMetadata().withName("on-copy")
                .endMetadata().withNewSpec().withStorageClassName("copy-own-xfs").withAccessModes("ReadWriteOnce")
                .withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build()).create();
        long gen = pool().getMetadata().getGeneration();
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", "{\"spec\": {\"storageClasses\": [{\"name\": \"own-xfs\"}]}}");
        StoragePool p = await("StorageClassesKept", () -> {
            StoragePool x = pool();
            return Long.valueOf(gen + 1).equals(x.getStatus().getObservedGeneration())
                    && Conditions.isTrue(x.getStatus().getConditions(), StoragePoolReconciler.CLASSES_KEPT) ? x : null;
        });
        Condition kept = Conditions.find(p.getStatus().getConditions(), StoragePoolReconciler.CLASSES_KEPT).orElseThrow();
        assertTrue(kept.getMessage().contains("StorageClass own-ext (PVC default/data)"), kept.getMessage());
        assertNotNull(admin.storage().v1().storageClasses().withName("own-ext").get(), "kept while its claim exists");
        assertCopiesIntact("a reconcile with claims on a copy");

        admin.persistentVolumeClaims().inNamespace("default").withName("data").delete();
        await("the unused class goes", () -> admin.storage().v1().storageClasses().withName("own-ext").get() == null);
        await("the condition clears", () -> Conditions.find(pool().getStatus().getConditions(), StoragePoolReconciler.CLASSES_KEPT)
                .map(c -> "False".equals(c.getStatus())).orElse(false));
        assertNotNull(admin.persistentVolumeClaims().inNamespace("default").withName("on-copy").get());
        assertCopiesIntact("the in-use class released");
    }

    @Test
    @Order(4)
    void aRestartAndAnUpgradeFromARecordlessReleaseKeepTheCopies() {
        operator.stop();
        // an older release kept no record: what it made is adopted at the names the pool wants, the copies are not
        admin.resources(StoragePool.class).withName(POOL).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"status\": {\"managedObjects\": null, \"unmanagedCopies\": null}}");
        assertEquals(null, pool().getStatus().getManagedObjects());
        long gen = pool().getMetadata().getGeneration();
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", """
                {"spec": {"storageClasses": [{"name": "own-xfs"}, {"name": "own-new"}]}}
                """);
        startOperator();
        StoragePool p = reconciledAt(gen + 1);
        StoragePool adopted = await("adopted and recorded again", () -> {
            StoragePool x = pool();
            return x.getStatus().getManagedObjects() != null && x.getStatus().getManagedObjects().stream()
                    .anyMatch(m -> m.getName().equals("own-new")) ? x : null;
        });
        Set<String> uids = adopted.getStatus().getManagedObjects().stream().map(ManagedObject::getUid).collect(Collectors.toSet());
        for (ManagedObject c : copies) {
            assertFalse(uids.contains(c.getUid()), c.describe() + " is not adopted");
        }
        assertTrue(adopted.getStatus().getManagedObjects().stream().anyMatch(m -> m.getName().equals("own-xfs")), "own-xfs adopted");
        assertNotNull(p);
        // the adopted class is the pool's: removed from the spec, it goes; the copies stay
        Kubectl.ok("patch", "storagepool", POOL, "--type", "merge", "-p", "{\"spec\": {\"storageClasses\": [{\"name\": \"own-xfs\"}]}}");
        await("the pool's own class removed after the upgrade", () -> admin.storage().v1().storageClasses().withName("own-new").get() == null);
        assertCopiesIntact("an operator restart and an upgrade");
    }

    @Test
    @Order(5)
    void theCopiesStayWhenThePoolGoes() {
        admin.persistentVolumeClaims().inNamespace("default").withName("on-copy").delete();
        Kubectl.ok("delete", "storagepool", POOL);
        await("pool gone", () -> pool() == null);
        await("the pool's own objects garbage-collected", () -> admin.storage().v1().csiDrivers().withName("own.loopcsi.io").get() == null
                && admin.apps().deployments().inNamespace(NS).withName("loopcsi-own-controller").get() == null
                && admin.storage().v1().storageClasses().withName("own-xfs").get() == null);
        // the garbage collector works in the background: give it time to (wrongly) take the copies too
        try {
            Thread.sleep(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertCopiesIntact("the pool's deletion");
        for (ManagedObject c : copies) {
            var refs = get(c).getMetadata().getOwnerReferences();
            assertTrue(refs == null || refs.stream().noneMatch(r -> "StoragePool".equals(r.getKind())), c.describe() + " released: " + refs);
        }
    }
}
