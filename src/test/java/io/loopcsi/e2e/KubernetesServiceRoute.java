package io.loopcsi.e2e;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes the {@code kubernetes} Service of a kube-testenv node route to its API server, as
 * kube-proxy does in a real cluster: kube-testenv has no kube-proxy and its API server listens on
 * 127.0.0.1 only, so a pod on the pod network would find nothing at the Service's ClusterIP
 * (KUBERNETES_SERVICE_HOST, which kubelet gives every pod). The kernel does it, the way kube-proxy
 * reaches a localhost endpoint: a DNAT of ClusterIP:port to 127.0.0.1:API-port for packets from the
 * pod bridge (and for this host's own connections), with {@code route_localnet} on the bridge so
 * that the kernel accepts and answers them. TLS stays end to end, and the API server's certificate
 * already names the ClusterIP. Pods therefore run with their manifests unchanged (no hostNetwork,
 * no environment overrides), their ServiceAccount token and ca.crt as in any cluster.
 *
 * <p>Why not a forwarder in the test JVM (what this was): twice an e2e run had requests of the
 * operator or the controller hang for fabric8's whole 10 s timeout with nothing slow in the API
 * server's log, on a quiet machine too; a kernel NAT leaves no userspace hop to stall.
 *
 * <p>Nothing outlives the test environment: {@link #close()} deletes the rules, and
 * {@code route_localnet} goes with the bridge when kube-testenv goes down.
 */
final class KubernetesServiceRoute implements AutoCloseable {

    /** kube-testenv's pod bridge (tools README: "bridge kube-testenv0 with 10.244.0.1/24"). */
    static final String BRIDGE = "kube-testenv0";

    private final List<List<String>> rules = new ArrayList<>();

    private KubernetesServiceRoute(String clusterIp, int port, String apiHost, int apiPort) throws IOException {
        if (!"127.0.0.1".equals(apiHost)) {
            throw new IOException("the API server is at " + apiHost + ", not on 127.0.0.1");
        }
        String to = apiHost + ":" + apiPort;
        List<String> match = List.of("-d", clusterIp + "/32", "-p", "tcp", "--dport", String.valueOf(port), "-j", "DNAT",
                "--to-destination", to, "-m", "comment", "--comment", "loopcsi e2e: kubernetes Service");
        List<String> fromPods = new ArrayList<>(List.of("PREROUTING", "-i", BRIDGE));
        fromPods.addAll(match);
        List<String> fromHost = new ArrayList<>(List.of("OUTPUT"));
        fromHost.addAll(match);
        Files.writeString(Path.of("/proc/sys/net/ipv4/conf", BRIDGE, "route_localnet"), "1");
        try {
            for (List<String> rule : List.of(fromPods, fromHost)) {
                iptables("-A", rule);
                rules.add(rule);
            }
        } catch (IOException e) {
            close();
            throw e;
        }
    }

    /**
     * Routes {@code clusterIp:port} (the kubernetes Service) to the API server of a kubeconfig's
     * {@code server} URL (https://127.0.0.1:PORT).
     */
    static KubernetesServiceRoute start(String clusterIp, int port, String apiServerUrl) {
        URI u = URI.create(apiServerUrl);
        try {
            return new KubernetesServiceRoute(clusterIp, port, u.getHost(), u.getPort());
        } catch (IOException e) {
            throw new IllegalStateException("cannot route the kubernetes Service " + clusterIp + ":" + port + " to " + apiServerUrl
                    + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        for (List<String> rule : rules) {
            try {
                iptables("-D", rule);
            } catch (IOException e) {
                System.err.println("service route: " + e.getMessage());
            }
        }
        rules.clear();
    }

    private static void iptables(String op, List<String> rule) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("iptables", "-w", "-t", "nat", op));
        cmd.addAll(rule);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("timed out: " + String.join(" ", cmd));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        String out = new String(p.getInputStream().readAllBytes()).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " exited " + p.exitValue() + ": " + out);
        }
    }
}
