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
        assertEquals(Images.LOOPCSI, loopcsi.getImage());
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
        assertTrue(prov.getArgs().containsAll(List.of("--feature-gates=Topology=true", "--enable-capacity", "--capacity-ownerref-level=2",
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
        assertEquals(Images.PROVISIONER, ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, true, 30))
                .getSpec().getTemplate().getSpec().getContainers().get(1).getImage());
        var chosen = Pools.minimal("p1");
        chosen.getSpec().getImages().setProvisioner("example.org/provisioner:mine");
        assertEquals("example.org/provisioner:mine", ControllerDeployment.desired(chosen, "ns", new ClusterInfo(true, true, false, 20))
                .getSpec().getTemplate().getSpec().getContainers().get(1).getImage(), "an image the admin chose is kept");
    }

    @Test
    void featureGatesOnlyWhereTheirApisAreServedAndTheSidecarsKnowThem() {
        List<Container> plain = ControllerDeployment.desired(Pools.minimal("p1"), "ns", ClusterInfo.CURRENT, VolumeApis.NONE).getSpec()
                .getTemplate().getSpec().getContainers();
        assertTrue(plain.stream().flatMap(c -> c.getArgs().stream()).noneMatch(a -> a.contains("VolumeAttributesClass")
                || a.contains("CSIVolumeGroupSnapshot")), "no gate without its API: csi-snapshotter would stop serving snapshots");
        assertEquals(plain, ControllerDeployment.desired(Pools.minimal("p1"), "ns", ClusterInfo.CURRENT).getSpec().getTemplate().getSpec()
                .getContainers());

        List<Container> both = ControllerDeployment.desired(Pools.minimal("p1"), "ns", ClusterInfo.CURRENT, new VolumeApis(true, true))
                .getSpec().getTemplate().getSpec().getContainers();
        assertTrue(both.get(1).getArgs().contains("--feature-gates=Topology=true,VolumeAttributesClass=true"), both.get(1).getArgs()::toString);
        assertTrue(both.get(2).getArgs().contains("--feature-gates=VolumeAttributesClass=true"), both.get(2).getArgs()::toString);
        assertTrue(both.get(3).getArgs().contains("--feature-gates=CSIVolumeGroupSnapshot=true"), both.get(3).getArgs()::toString);

        List<Container> groupsOnly = ControllerDeployment.desired(Pools.minimal("p1"), "ns", ClusterInfo.CURRENT, new VolumeApis(false, true))
                .getSpec().getTemplate().getSpec().getContainers();
        assertTrue(groupsOnly.get(1).getArgs().contains("--feature-gates=Topology=true"));
        assertFalse(groupsOnly.get(2).getArgs().stream().anyMatch(a -> a.startsWith("--feature-gates")));
        assertTrue(groupsOnly.get(3).getArgs().contains("--feature-gates=CSIVolumeGroupSnapshot=true"));

        List<Container> old = ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, true, 22),
                new VolumeApis(true, true)).getSpec().getTemplate().getSpec().getContainers();
        assertTrue(old.stream().flatMap(c -> c.getArgs().stream()).noneMatch(a -> a.contains("VolumeAttributesClass")
                || a.contains("CSIVolumeGroupSnapshot")), "csi-snapshotter v5.0.1 and csi-resizer v1.4.0 know neither gate");
    }

    @Test
    void imagesAndResourcesComeFromTheSpec() {
        var p = Pools.minimal("p1");
        p.getSpec().getImages().setLoopcsi("example.org/loopcsi:dev");
        p.getSpec().getImages().setResizer("example.org/resizer:1");
        p.getSpec().setResources(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
                .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("1Gi")).build());
        var pod = ControllerDeployment.desired(p, "ns").getSpec().getTemplate().getSpec();
        assertEquals("example.org/loopcsi:dev", pod.getContainers().get(0).getImage());
        assertEquals("example.org/resizer:1", pod.getContainers().get(2).getImage());
        assertEquals("1Gi", pod.getContainers().get(0).getResources().getLimits().get("memory").toString());
    }
}
