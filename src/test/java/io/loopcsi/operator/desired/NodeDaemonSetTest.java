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
        assertEquals(Boolean.FALSE, pod.getEnableServiceLinks(), "no env vars per Service of the namespace: each start matches them all");

        // doctor first, with the node container's image, privileges and mounts: a node that cannot host the pool says why
        Container doctor = pod.getInitContainers().get(0);
        assertEquals(1, pod.getInitContainers().size());
        assertEquals(List.of("doctor", "--data-dir", "/var/lib/loopcsi/p1", "--capacity", "20Gi"), doctor.getArgs());
        assertEquals(node.getImage(), doctor.getImage());
        assertTrue(doctor.getSecurityContext().getPrivileged());
        assertEquals(node.getVolumeMounts().stream().filter(m -> !m.getName().equals(NodeTransfer.TOKEN_VOLUME)).toList(),
                doctor.getVolumeMounts(), "the node's mounts but the transfer token, which doctor does not use");
        assertEquals("FallbackToLogsOnError", doctor.getTerminationMessagePolicy(), "its verdict is the termination message");
    }

    @Test
    void byDefaultTheNodeServesTransfersOnItsPodIpWithAProjectedPodBoundToken() {
        var ds = NodeDaemonSet.desired(Pools.minimal("p1"), "ns");
        var pod = ds.getSpec().getTemplate().getSpec();
        Container node = pod.getContainers().get(0);
        assertTrue(pod.getHostNetwork() == null || !pod.getHostNetwork(), "the pod's own network: the port is the same on every node");
        var port = node.getPorts().stream().filter(p -> "transfer".equals(p.getName())).findFirst().orElseThrow();
        assertEquals(9810, port.getContainerPort());
        assertNull(port.getHostPort());
        Map<String, String> env = new java.util.LinkedHashMap<>();
        node.getEnv().stream().filter(e -> e.getValue() != null).forEach(e -> env.put(e.getName(), e.getValue()));
        assertEquals("0.0.0.0:9810", env.get("LOOPCSI_NODE_TRANSFER_ADDRESS"));
        assertEquals("$(POD_IP):9810", env.get("LOOPCSI_NODE_TRANSFER_ADVERTISE_ADDRESS"));
        assertEquals("ns", env.get("LOOPCSI_NODE_TRANSFER_NAMESPACE"));
        assertEquals(ds.getMetadata().getName(), env.get("LOOPCSI_NODE_TRANSFER_NODE_ACCOUNT"), "the DaemonSet's name, which is its ServiceAccount's");
        assertEquals(pod.getServiceAccountName(), env.get("LOOPCSI_NODE_TRANSFER_NODE_ACCOUNT"));
        assertEquals("/var/run/secrets/loopcsi.io/transfer/token", env.get("LOOPCSI_NODE_TRANSFER_TOKEN_FILE"));
        assertEquals("2", env.get("LOOPCSI_NODE_TRANSFER_CONCURRENCY"));
        assertNull(env.get("LOOPCSI_NODE_TRANSFER_BANDWIDTH"), "no cap unless the pool sets one");
        List<String> names = node.getEnv().stream().map(e -> e.getName()).toList();
        assertTrue(names.indexOf("POD_IP") >= 0 && names.indexOf("POD_IP") < names.indexOf("LOOPCSI_NODE_TRANSFER_ADVERTISE_ADDRESS"),
                "kubelet expands $(POD_IP) only from a variable defined before");
        assertEquals("status.podIP", node.getEnv().get(names.indexOf("POD_IP")).getValueFrom().getFieldRef().getFieldPath());

        var token = volume(pod.getVolumes(), "transfer-token").getProjected().getSources().get(0).getServiceAccountToken();
        assertEquals("loopcsi.io/transfer", token.getAudience());
        assertEquals(600L, token.getExpirationSeconds(), "the least the API server accepts (10 minutes)");
        assertEquals("token", token.getPath());
        VolumeMount m = mount(node, "transfer-token");
        assertEquals("/var/run/secrets/loopcsi.io/transfer", m.getMountPath());
        assertTrue(m.getReadOnly());
    }

    @Test
    void aPoolSetsTheTransfersBoundsOrTurnsItOff() {
        var pool = Pools.minimal("p1");
        pool.getSpec().getTransfer().setBandwidthPerNode("100Mi");
        pool.getSpec().getTransfer().setMaxConcurrentPerNode(4);
        Container node = NodeDaemonSet.desired(pool, "ns").getSpec().getTemplate().getSpec().getContainers().get(0);
        assertTrue(node.getEnv().stream().anyMatch(e -> e.getName().equals("LOOPCSI_NODE_TRANSFER_BANDWIDTH") && e.getValue().equals("104857600")),
                "bytes per second, as the node role reads it");
        assertTrue(node.getEnv().stream().anyMatch(e -> e.getName().equals("LOOPCSI_NODE_TRANSFER_CONCURRENCY") && e.getValue().equals("4")));

        pool.getSpec().getTransfer().setEnabled(false);
        var pod = NodeDaemonSet.desired(pool, "ns").getSpec().getTemplate().getSpec();
        node = pod.getContainers().get(0);
        assertTrue(node.getEnv().stream().noneMatch(e -> e.getName().startsWith("LOOPCSI_NODE_TRANSFER") || e.getName().equals("POD_IP")));
        assertEquals(List.of("metrics"), node.getPorts().stream().map(p -> p.getName()).toList());
        assertTrue(pod.getVolumes().stream().noneMatch(v -> v.getName().equals("transfer-token")));
    }

    @Test
    void aBandwidthCapThatIsNoQuantityOrBelowOneMebibytePerSecondIsRefusedNamingTheField() {
        var pool = Pools.minimal("p1");
        assertEquals(java.util.Optional.empty(), NodeTransfer.problem(pool));
        pool.getSpec().getTransfer().setBandwidthPerNode("1Mi");
        assertEquals(java.util.Optional.empty(), NodeTransfer.problem(pool));
        pool.getSpec().getTransfer().setBandwidthPerNode("500k");
        assertTrue(NodeTransfer.problem(pool).orElseThrow().startsWith("spec.transfer.bandwidthPerNode (500k) is below 1Mi"));
        pool.getSpec().getTransfer().setBandwidthPerNode("fast");
        assertTrue(NodeTransfer.problem(pool).orElseThrow().contains("spec.transfer.bandwidthPerNode: not a quantity: 'fast'"));
        pool.getSpec().getTransfer().setBandwidthPerNode(null);
        pool.getSpec().getTransfer().setMaxConcurrentPerNode(0);
        assertTrue(NodeTransfer.problem(pool).orElseThrow().contains("spec.transfer.maxConcurrentPerNode (0)"));
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

    /**
     * Under the JVM the node container runs C2 (the image's JAVA_OPTS stops at C1, which has no
     * SHA-256/AES/GHASH intrinsic: transfers ran at ~7 MiB/s); doctor, the native runtime and the
     * controller keep what their image says.
     */
    @Test
    void underTheJvmTheNodeContainerRunsFullTieredCompilationAndNothingElseChanges() {
        var pool = Pools.minimal("p1");
        pool.getSpec().setRuntime(io.loopcsi.operator.api.PoolRuntime.JVM);
        var pod = NodeDaemonSet.desired(pool, "ns").getSpec().getTemplate().getSpec();
        Container node = pod.getContainers().get(0);
        List<String> opts = node.getEnv().stream().filter(e -> e.getName().equals("JAVA_OPTS")).map(e -> e.getValue()).toList();
        assertEquals(List.of("-XX:TieredStopAtLevel=4"), opts, "one JAVA_OPTS, replacing the image's -XX:TieredStopAtLevel=1");
        assertTrue(pod.getInitContainers().get(0).getEnv() == null || pod.getInitContainers().get(0).getEnv().stream()
                .noneMatch(e -> e.getName().equals("JAVA_OPTS")), "doctor moves no data: the image's C1");

        var nativ = Pools.minimal("p1");
        nativ.getSpec().setRuntime(io.loopcsi.operator.api.PoolRuntime.NATIVE);
        assertTrue(NodeDaemonSet.desired(nativ, "ns").getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                .noneMatch(e -> e.getName().equals("JAVA_OPTS")), "the native executable takes no JAVA_OPTS");
        assertTrue(ControllerDeployment.desired(pool, "ns").getSpec().getTemplate().getSpec().getContainers().stream()
                .flatMap(c -> c.getEnv() == null ? java.util.stream.Stream.empty() : c.getEnv().stream())
                .noneMatch(e -> e.getName().equals("JAVA_OPTS")), "the controller moves no data: the image's C1");
    }
}
