package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.loopcsi.operator.api.Images;

class ControllerDeploymentTest {

    @Test
    void controllerRoleBesideTheSidecarsOnASharedSocket() {
        Deployment d = ControllerDeployment.desired(Pools.minimal("p1"), "ns");
        assertEquals("loopcsi-p1-controller", d.getMetadata().getName());
        assertEquals(Boolean.FALSE, d.getSpec().getTemplate().getSpec().getEnableServiceLinks(), "no env vars per Service of the namespace");
        assertEquals("ns", d.getMetadata().getNamespace());
        assertEquals(1, d.getSpec().getReplicas());
        var pod = d.getSpec().getTemplate().getSpec();
        assertEquals("loopcsi-p1-controller", pod.getServiceAccountName());
        assertEquals(List.of("loopcsi", "csi-provisioner", "csi-resizer", "csi-snapshotter"),
                pod.getContainers().stream().map(Container::getName).toList(), "loopcsi's own health is its liveness: no livenessprobe sidecar");
        Container loopcsi = pod.getContainers().get(0);
        assertEquals(List.of("controller", "--endpoint", "unix:///csi/csi.sock", "--driver-name", "p1.loopcsi.io", "--pool", "p1",
                "--http-address", "0.0.0.0:9090"), loopcsi.getArgs());
        assertEquals("/q/health/live", loopcsi.getLivenessProbe().getHttpGet().getPath());
        assertEquals("/q/health/ready", loopcsi.getReadinessProbe().getHttpGet().getPath());
        assertEquals("/tmp", loopcsi.getVolumeMounts().get(1).getMountPath(), "a writable /tmp under the read-only root");
        assertEquals(Images.LOOPCSI_NATIVE, loopcsi.getImage(), "the native image by default");
        assertNotNull(pod.getVolumes().get(0).getEmptyDir());
        for (Container c : pod.getContainers()) {
            assertEquals("/csi", c.getVolumeMounts().get(0).getMountPath(), c.getName());
            assertFalse(c.getSecurityContext().getAllowPrivilegeEscalation(), c.getName());
            assertNull(c.getSecurityContext().getPrivileged(), c.getName());
        }
        assertTrue(pod.getSecurityContext().getRunAsNonRoot());
        assertTrue(d.getSpec().getSelector().getMatchLabels().entrySet()
                .stream().allMatch(e -> e.getValue().equals(d.getSpec().getTemplate().getMetadata().getLabels().get(e.getKey()))));
    }

    @Test
    void provisionerRunsWithTopologyCapacityAndStrictTopology() {
        var pod = ControllerDeployment.desired(Pools.minimal("p1"), "ns").getSpec().getTemplate().getSpec();
        Container prov = pod.getContainers().get(1);
        assertEquals(Images.PROVISIONER, prov.getImage());
        assertTrue(prov.getArgs().containsAll(List.of("--enable-capacity", "--capacity-ownerref-level=2",
                "--extra-create-metadata", "--strict-topology", "--leader-election", "--default-fstype=xfs")));
        assertTrue(prov.getEnv().stream().anyMatch(e -> e.getName().equals("POD_NAME")));
        assertTrue(prov.getEnv().stream().anyMatch(e -> e.getName().equals("NAMESPACE")));
    }

    @Test
    void sidecarsFitTheServersCsiStorageCapacityVersion() {
        var on120 = ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, false, 20)).getSpec().getTemplate()
                .getSpec().getContainers();
        assertEquals("registry.k8s.io/sig-storage/csi-provisioner:v2.1.2", on120.get(1).getImage(), "v1alpha1 CSIStorageCapacity");
        assertEquals("registry.k8s.io/sig-storage/csi-snapshotter:v4.0.0", on120.get(3).getImage());
        var on122 = ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, true, 22)).getSpec().getTemplate()
                .getSpec().getContainers();
        assertEquals("registry.k8s.io/sig-storage/csi-provisioner:v3.1.1", on122.get(1).getImage(), "v1beta1 CSIStorageCapacity");
        assertEquals("registry.k8s.io/sig-storage/csi-provisioner:v5.3.0", ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, true, 30))
                .getSpec().getTemplate().getSpec().getContainers().get(1).getImage(), "VolumeAttributesClass v1beta1 servers keep v5.3");
        assertEquals(Images.PROVISIONER, ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, true, 34))
                .getSpec().getTemplate().getSpec().getContainers().get(1).getImage());
        var chosen = Pools.minimal("p1");
        chosen.getSpec().getImages().setProvisioner("example.org/provisioner:mine");
        assertEquals("example.org/provisioner:mine", ControllerDeployment.desired(chosen, "ns", new ClusterInfo(true, true, false, 20))
                .getSpec().getTemplate().getSpec().getContainers().get(1).getImage(), "an image the admin chose is kept");
    }

    @Test
    void featureGatesOnlyWhereTheirApisAreServedAndTheSidecarsKnowThem() {
        List<Container> plain = containers(ClusterInfo.CURRENT, VolumeApis.NONE);
        assertTrue(plain.stream().flatMap(c -> c.getArgs().stream()).noneMatch(a -> a.startsWith("--feature-gates")),
                "v6.3/v2.2/v8.6 without group snapshots: no gate (Topology and VolumeAttributesClass are on by default there)");
        assertEquals(plain, ControllerDeployment.desired(Pools.minimal("p1"), "ns", ClusterInfo.CURRENT).getSpec().getTemplate().getSpec()
                .getContainers());
        List<Container> current = containers(ClusterInfo.CURRENT, VolumeApis.ALL);
        assertEquals(List.of("--feature-gates=CSIVolumeGroupSnapshot=true"), gates(current.get(3)));
        assertEquals(List.of(), gates(current.get(1)));
        assertEquals(List.of(), gates(current.get(2)));
        assertEquals(List.of(), gates(containers(ClusterInfo.CURRENT, new VolumeApis(true, true, true, false)).get(3)),
                "csi-snapshotter v8.6 reads groupsnapshot v1: v1beta1 CRDs alone do not get the gate");

        ClusterInfo k130 = new ClusterInfo(true, true, true, 30);
        List<Container> both = containers(k130, new VolumeApis(true, false, true, false));
        assertEquals(List.of("--feature-gates=VolumeAttributesClass=true"), gates(both.get(1)), "v5.3: Topology is on by default");
        assertEquals(List.of("--feature-gates=VolumeAttributesClass=true"), gates(both.get(2)));
        assertEquals(List.of("--feature-gates=CSIVolumeGroupSnapshot=true"), gates(both.get(3)));
        List<Container> groupsOnly = containers(k130, new VolumeApis(false, true, true, true));
        assertEquals(List.of(), gates(groupsOnly.get(1)), "v5.3 reads VolumeAttributesClass v1beta1 only");
        assertEquals(List.of(), gates(groupsOnly.get(2)));
        assertEquals(List.of("--feature-gates=CSIVolumeGroupSnapshot=true"), gates(groupsOnly.get(3)));

        for (int minor : List.of(20, 22)) {
            List<Container> old = containers(new ClusterInfo(true, true, minor > 20, minor), VolumeApis.ALL);
            assertEquals(List.of("--feature-gates=Topology=true"), gates(old.get(1)), "v2/v3: the GA Topology gate defaults to off");
            assertEquals(List.of(), gates(old.get(2)), "csi-resizer v1.1 has no --feature-gates, v1.4 no VolumeAttributesClass");
            assertEquals(List.of(), gates(old.get(3)), "csi-snapshotter v4/v5 have no group snapshots");
        }
    }

    @Test
    void aDefaultOfAnEarlierVersionFollowsTheServerToo() {
        var p = Pools.minimal("p1");
        p.getSpec().getImages().setProvisioner("registry.k8s.io/sig-storage/csi-provisioner:v5.3.0"); // the 0.1.0 CRD's default
        assertEquals("registry.k8s.io/sig-storage/csi-provisioner:v2.1.2", ControllerDeployment.desired(p, "ns",
                new ClusterInfo(true, true, false, 20)).getSpec().getTemplate().getSpec().getContainers().get(1).getImage());
    }

    private static List<Container> containers(ClusterInfo cluster, VolumeApis apis) {
        return ControllerDeployment.desired(Pools.minimal("p1"), "ns", cluster, apis).getSpec().getTemplate().getSpec().getContainers();
    }

    private static List<String> gates(Container c) {
        return c.getArgs().stream().filter(a -> a.startsWith("--feature-gates")).toList();
    }

    @Test
    void imagesAndResourcesComeFromTheSpec() {
        var p = Pools.minimal("p1");
        p.getSpec().getImages().setLoopcsi("example.org/loopcsi:dev");
        p.getSpec().getImages().setResizer("example.org/resizer:1");
        p.getSpec().getResources().setController(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
                .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("1Gi")).build());
        p.getSpec().getImages().setLoopcsiNative("example.org/loopcsi:dev-native");
        var pod = ControllerDeployment.desired(p, "ns").getSpec().getTemplate().getSpec();
        assertEquals("example.org/loopcsi:dev-native", pod.getContainers().get(0).getImage(), "spec.runtime native (default)");
        assertEquals("example.org/resizer:1", pod.getContainers().get(2).getImage());
        assertEquals("1Gi", pod.getContainers().get(0).getResources().getLimits().get("memory").toString());
        p.getSpec().setRuntime(io.loopcsi.operator.api.PoolRuntime.JVM);
        pod = ControllerDeployment.desired(p, "ns").getSpec().getTemplate().getSpec();
        assertEquals("example.org/loopcsi:dev", pod.getContainers().get(0).getImage(), "spec.runtime jvm");
    }

    @Test
    void theNodeComponentsRunTheSameRuntimeAsTheController() {
        var p = Pools.minimal("p1");
        for (var runtime : io.loopcsi.operator.api.PoolRuntime.values()) {
            p.getSpec().setRuntime(runtime);
            String controller = ControllerDeployment.desired(p, "ns").getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
            var node = NodeDaemonSet.desired(p, "ns").getSpec().getTemplate().getSpec();
            assertEquals(runtime == io.loopcsi.operator.api.PoolRuntime.JVM ? Images.LOOPCSI : Images.LOOPCSI_NATIVE, controller);
            assertEquals(controller, node.getContainers().get(0).getImage(), runtime.name());
            assertEquals(controller, node.getInitContainers().get(0).getImage(), "doctor: " + runtime.name());
        }
    }
}
