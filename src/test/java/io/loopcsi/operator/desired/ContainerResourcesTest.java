package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.loopcsi.operator.api.StoragePool;

class ContainerResourcesTest {

    private static List<Container> everyContainer(StoragePool p) {
        List<Container> all = new ArrayList<>(ControllerDeployment.desired(p, "ns").getSpec().getTemplate().getSpec().getContainers());
        var node = NodeDaemonSet.desired(p, "ns").getSpec().getTemplate().getSpec();
        all.addAll(node.getInitContainers());
        all.addAll(node.getContainers());
        return all;
    }

    private static Container container(List<Container> all, String name) {
        return all.stream().filter(c -> c.getName().equals(name)).findFirst().orElseThrow();
    }

    private static String mem(ResourceRequirements r, boolean limit) {
        return (limit ? r.getLimits() : r.getRequests()).get("memory").toString();
    }

    @Test
    void everyContainerHasAMemoryRequestAndLimitByDefault() {
        List<Container> all = everyContainer(Pools.full("p"));
        assertEquals(6, all.size(), "loopcsi + 3 sidecars, doctor + loopcsi");
        for (Container c : all) {
            assertNotNull(c.getResources().getRequests().get("memory"), c.getName());
            assertNotNull(c.getResources().getLimits().get("memory"), c.getName());
        }
        assertEquals("256Mi", mem(all.get(0).getResources(), true));
        assertEquals("160Mi", mem(all.get(0).getResources(), false));
        assertEquals("400Mi", mem(container(all, "csi-provisioner").getResources(), true));
        assertEquals("200Mi", mem(container(all, "csi-snapshotter").getResources(), true));
        assertEquals("64Mi", mem(container(all, "doctor").getResources(), false), "the native node's request");
        assertEquals("128Mi", mem(container(all, "doctor").getResources(), true), "the native node's limit");
        assertEquals(ContainerResources.problem(Pools.full("p")), java.util.Optional.empty());
    }

    @Test
    void theNodeOnTheJvmGetsTheJvmsSizes() {
        StoragePool p = Pools.full("p");
        p.getSpec().setRuntime(io.loopcsi.operator.api.PoolRuntime.JVM);
        ResourceRequirements node = container(everyContainer(p), "doctor").getResources(); // the node pod: doctor + loopcsi, same sizes
        assertEquals("192Mi", mem(node, false));
        assertEquals("256Mi", mem(node, true));
        p.getSpec().getResources().setNode(new ResourceRequirementsBuilder().addToLimits("memory", new Quantity("100Mi")).build());
        String m = ContainerResources.problem(p).orElseThrow();
        assertTrue(m.contains("spec.resources.node.limits.memory (100Mi) is below 160Mi, the least the node role runs in (spec.runtime: jvm)"), m);
        p.getSpec().setRuntime(io.loopcsi.operator.api.PoolRuntime.NATIVE);
        p.getSpec().getResources().setNode(new ResourceRequirementsBuilder().addToLimits("memory", new Quantity("100Mi")).build());
        assertTrue(ContainerResources.problem(p).isEmpty(), "100Mi is enough for the native node");
    }

    @Test
    void theLoopcsiContainersTellTheLauncherTheirLimit() {
        for (Container c : everyContainer(Pools.minimal("p"))) {
            if (c.getName().equals("loopcsi")) {
                EnvVar e = c.getEnv().stream().filter(v -> v.getName().equals("LOOPCSI_MEMORY_LIMIT")).findFirst().orElseThrow();
                assertEquals("limits.memory", e.getValueFrom().getResourceFieldRef().getResource());
                assertEquals("loopcsi", e.getValueFrom().getResourceFieldRef().getContainerName());
            }
        }
    }

    @Test
    void whatThePoolSetsReplacesTheDefaultPerResourceAndRole() {
        StoragePool p = Pools.minimal("p");
        p.getSpec().getResources().setNode(new ResourceRequirementsBuilder().addToLimits("memory", new Quantity("1Gi"))
                .addToLimits("cpu", new Quantity("2")).build());
        p.getSpec().getResources().setSidecars(new ResourceRequirementsBuilder().addToRequests("memory", new Quantity("64Mi")).build());
        List<Container> all = everyContainer(p);
        ResourceRequirements node = container(all, "doctor").getResources();
        assertEquals(Map.of("memory", new Quantity("1Gi"), "cpu", new Quantity("2")), node.getLimits());
        assertEquals("64Mi", mem(node, false), "the default request stays");
        assertEquals("256Mi", mem(all.get(0).getResources(), true), "the controller keeps its default");
        assertEquals("64Mi", mem(container(all, "csi-resizer").getResources(), false));
        assertEquals("400Mi", mem(container(all, "csi-resizer").getResources(), true));
        assertTrue(ContainerResources.problem(p).isEmpty());
    }

    @Test
    void aRequestAboveTheDefaultLimitRaisesTheLimitWhenNoneIsSet() {
        StoragePool p = Pools.minimal("p");
        p.getSpec().getResources().setController(new ResourceRequirementsBuilder().addToRequests("memory", new Quantity("512Mi")).build());
        ResourceRequirements r = ContainerResources.controller(p);
        assertEquals("512Mi", mem(r, true));
        assertTrue(ContainerResources.problem(p).isEmpty());
    }

    @Test
    void aLimitBelowItsRequestIsRefusedNamingBothFields() {
        StoragePool p = Pools.minimal("p");
        p.getSpec().getResources().setNode(new ResourceRequirementsBuilder().addToRequests("memory", new Quantity("300Mi"))
                .addToLimits("memory", new Quantity("200Mi")).build());
        String m = ContainerResources.problem(p).orElseThrow();
        assertEquals("spec.resources.node.limits.memory (200Mi) is below spec.resources.node.requests.memory (300Mi);"
                + " a limit must be at least the request", m);
    }

    @Test
    void aMemoryLimitBelowWhatTheRoleNeedsIsRefusedWithTheMinimum() {
        StoragePool p = Pools.minimal("p");
        p.getSpec().getResources().setController(new ResourceRequirementsBuilder().addToRequests("memory", new Quantity("64Mi"))
                .addToLimits("memory", new Quantity("128Mi")).build());
        p.getSpec().getResources().setSidecars(new ResourceRequirementsBuilder().addToRequests("memory", new Quantity("8Mi"))
                .addToLimits("memory", new Quantity("16Mi")).build());
        String m = ContainerResources.problem(p).orElseThrow();
        assertTrue(m.contains("spec.resources.controller.limits.memory (128Mi) is below 160Mi, the least the controller role runs in;"
                + " set at least 160Mi"), m);
        assertTrue(m.contains("spec.resources.sidecars.limits.memory (16Mi) is below 20Mi"), m);
        assertFalse(m.contains("node"), m);
    }

    @Test
    void aQuantityThatDoesNotParseIsNamed() {
        StoragePool p = Pools.minimal("p");
        p.getSpec().getResources().setNode(new ResourceRequirementsBuilder().addToLimits("memory", new Quantity("lots")).build());
        assertEquals("spec.resources.node.limits.memory: not a quantity: 'lots' (use e.g. 256Mi, 1Gi, 100m)",
                ContainerResources.problem(p).orElseThrow());
    }
}
