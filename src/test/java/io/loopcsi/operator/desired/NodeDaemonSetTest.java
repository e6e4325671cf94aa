package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;

class NodeDaemonSetTest {

    @Test
    void privilegedNodeRoleWithHostDevKubeletBidirectionalAndTheBackingDir() {
        var ds = NodeDaemonSet.desired(Pools.minimal("p1"), "ns");
        assertEquals("loopcsi-p1-node", ds.getMetadata().getName());
        var pod = ds.getSpec().getTemplate().getSpec();
        assertEquals(List.of("loopcsi", "node-driver-registrar", "liveness-probe"), pod.getContainers().stream().map(Container::getName).toList());
        Container node = pod.getContainers().get(0);
        assertTrue(node.getSecurityContext().getPrivileged());
        assertEquals("node", node.getArgs().get(0));
        assertTrue(node.getArgs().containsAll(List.of("--data-dir", "/var/lib/loopcsi/p1", "--capacity", "20Gi", "$(NODE_NAME)")));
        VolumeMount kubelet = mount(node, "kubelet-dir");
        assertEquals("/var/lib/kubelet", kubelet.getMountPath());
        assertEquals("Bidirectional", kubelet.getMountPropagation());
        assertEquals("/dev", mount(node, "dev").getMountPath());
        assertEquals("/var/lib/loopcsi/p1", volume(pod.getVolumes(), "backing-dir").getHostPath().getPath());
        assertEquals("/var/lib/kubelet/plugins/p1.loopcsi.io", volume(pod.getVolumes(), "socket-dir").getHostPath().getPath());
        Container reg = pod.getContainers().get(1);
        assertTrue(reg.getArgs().contains("--kubelet-registration-path=/var/lib/kubelet/plugins/p1.loopcsi.io/csi.sock"));
        assertNull(reg.getSecurityContext().getPrivileged());
        assertNull(pod.getNodeSelector());
    }

    @Test
    void nodeSelectorTolerationsAndBackingDirFromTheSpec() {
        var p = Pools.full("p1");
        p.getSpec().setBackingDir("/srv/pool");
        p.getSpec().setTolerations(List.of(new TolerationBuilder().withKey("storage").withOperator("Exists").build()));
        var pod = NodeDaemonSet.desired(p, "ns").getSpec().getTemplate().getSpec();
        assertEquals(Map.of("disk", "fast"), pod.getNodeSelector());
        assertEquals("storage", pod.getTolerations().get(0).getKey());
        assertEquals("/srv/pool", volume(pod.getVolumes(), "backing-dir").getHostPath().getPath());
        assertEquals("/srv/pool", mount(pod.getContainers().get(0), "backing-dir").getMountPath());
    }

    private static VolumeMount mount(Container c, String name) {
        return c.getVolumeMounts().stream().filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    private static Volume volume(List<Volume> vs, String name) {
        return vs.stream().filter(v -> v.getName().equals(name)).findFirst().orElseThrow();
    }
}
