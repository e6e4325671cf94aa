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
    void theHostReserveAndTheOvercommitRatioArePassedOnlyWhenThePoolSetsThem() {
        var pool = Pools.minimal("p1");
        List<String> plain = NodeDaemonSet.nodeArgs(pool);
        assertTrue(!plain.contains("--host-reserve") && !plain.contains("--thin-overcommit"), "an older pool's template stays as it was");
        pool.getSpec().setHostReserve("10Gi");
        pool.getSpec().setThinOvercommit(2.0);
        List<String> args = NodeDaemonSet.nodeArgs(pool);
        int i = args.indexOf("--host-reserve");
        assertEquals(List.of("--host-reserve", "10Gi", "--thin-overcommit", "2"), args.subList(i, i + 4), "as the launcher takes them");
        pool.getSpec().setThinOvercommit(1.5);
        assertTrue(String.join(" ", NodeDaemonSet.nodeArgs(pool)).contains("--thin-overcommit 1.5"));
    }

    @Test
    void oneContainerTheNodeRoleRegisteringItselfWithKubeletAndProbingItsOwnHealth() {
        var ds = NodeDaemonSet.desired(Pools.minimal("p1"), "ns");
        assertEquals("loopcsi-p1-node", ds.getMetadata().getName());
        var pod = ds.getSpec().getTemplate().getSpec();
        assertEquals(List.of("loopcsi"), pod.getContainers().stream().map(Container::getName).toList(),
                "no node-driver-registrar, no livenessprobe sidecar");
        Container node = pod.getContainers().get(0);
        assertTrue(node.getSecurityContext().getPrivileged());
        assertEquals(List.of("node", "--endpoint", "unix:///var/lib/kubelet/plugins/p1.loopcsi.io/csi.sock", "--driver-name", "p1.loopcsi.io",
                "--pool", "p1", "--node-name", "$(NODE_NAME)", "--data-dir", "/var/lib/loopcsi/p1", "--capacity", "20Gi",
                "--registration-socket", "/var/lib/kubelet/plugins_registry/p1.loopcsi.io-reg.sock", "--allowed-roots", "/var/lib/kubelet",
                "--http-address", "0.0.0.0:9090"), node.getArgs());
        assertEquals("spec.nodeName", node.getEnv().get(0).getValueFrom().getFieldRef().getFieldPath());
        assertEquals("/q/health/live", node.getLivenessProbe().getHttpGet().getPath());
        assertEquals("metrics", node.getLivenessProbe().getHttpGet().getPort().getStrVal());
        assertEquals(9090, node.getPorts().get(0).getContainerPort());
        VolumeMount kubelet = mount(node, "kubelet-dir");
        assertEquals("/var/lib/kubelet", kubelet.getMountPath());
        assertEquals("Bidirectional", kubelet.getMountPropagation());
        assertEquals("/var/lib/kubelet", volume(pod.getVolumes(), "kubelet-dir").getHostPath().getPath());
        assertEquals("/dev", mount(node, "dev").getMountPath());
        assertEquals("/var/lib/loopcsi/p1", volume(pod.getVolumes(), "backing-dir").getHostPath().getPath());
        assertNull(pod.getNodeSelector());

        // doctor first, with the node container's image, privileges and mounts: a node that cannot host the pool says why
        Container doctor = pod.getInitContainers().get(0);
        assertEquals(1, pod.getInitContainers().size());
        assertEquals(List.of("doctor", "--data-dir", "/var/lib/loopcsi/p1", "--capacity", "20Gi"), doctor.getArgs());
        assertEquals(node.getImage(), doctor.getImage());
        assertTrue(doctor.getSecurityContext().getPrivileged());
        assertEquals(node.getVolumeMounts(), doctor.getVolumeMounts());
        assertEquals("FallbackToLogsOnError", doctor.getTerminationMessagePolicy(), "its verdict is the termination message");
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
