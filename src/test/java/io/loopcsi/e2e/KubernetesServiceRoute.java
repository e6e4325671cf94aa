package io.loopcsi.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes the {@code kubernetes} Service of a kube-testenv node route to its API server, as
 * kube-proxy does in a real cluster: kube-testenv has no kube-proxy and its API server listens on
 * 127.0.0.1 only, so a pod on the pod network would find nothing at the Service's ClusterIP
 * (KUBERNETES_SERVICE_HOST, which kubelet gives every pod). This adds the ClusterIP to the node's
 * pod bridge (so packets from pods are delivered to this machine) and forwards TCP from
 * ClusterIP:port to the API server, bytes only: TLS stays end to end, and the API server's
 * certificate already names the ClusterIP. Pods therefore run with their manifests unchanged
 * (no hostNetwork, no environment overrides), their ServiceAccount token and ca.crt as in any
 * cluster.
 *
 * <p>Nothing outlives the test environment: the address goes with the bridge when kube-testenv
 * goes down (and {@link #close()} removes it first), the forwarder with this JVM.
 */
final class KubernetesServiceRoute implements AutoCloseable {

    /** kube-testenv's pod bridge (tools README: "bridge kube-testenv0 with 10.244.0.1/24"). */
    static final String BRIDGE = "kube-testenv0";

    private final String clusterIp;
    private final ServerSocket server;
    private final InetSocketAddress apiServer;
    private volatile boolean closed;

    private KubernetesServiceRoute(String clusterIp, int port, InetSocketAddress apiServer) throws IOException {
        this.clusterIp = clusterIp;
        this.apiServer = apiServer;
        run("ip", "address", "add", clusterIp + "/32", "dev", BRIDGE);
        try {
            server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByName(clusterIp), port), 64);
        } catch (IOException e) {
            removeAddress();
            throw e;
        }
        Thread accept = new Thread(this::acceptLoop, "service-route-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /**
     * Routes {@code clusterIp:port} (the kubernetes Service) to the API server of a kubeconfig's
     * {@code server} URL (https://127.0.0.1:PORT).
     */
    static KubernetesServiceRoute start(String clusterIp, int port, String apiServerUrl) {
        URI u = URI.create(apiServerUrl);
        try {
            return new KubernetesServiceRoute(clusterIp, port, new InetSocketAddress(u.getHost(), u.getPort()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot route the kubernetes Service " + clusterIp + ":" + port + " to " + apiServerUrl
                    + ": " + e.getMessage(), e);
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                try {
                    upstream.connect(apiServer, 5000);
                } catch (IOException e) {
                    client.close();
                    continue;
                }
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("service route: " + e.getMessage());
                }
            }
        }
    }

    /** Copies from one socket to the other until end of stream, then half-closes the other. */
    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                closeQuietly(to);
                closeQuietly(from);
            }
        }, "service-route-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed by the other direction
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        removeAddress();
    }

    private void removeAddress() {
        try {
            run("ip", "address", "del", clusterIp + "/32", "dev", BRIDGE);
        } catch (IOException e) {
            // the bridge may already be gone with the environment, and the address with it
        }
    }

    private static void run(String... cmd) throws IOException {
        Process p = new ProcessBuilder(List.of(cmd)).redirectErrorStream(true).start();
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
