package io.loopcsi.cli;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.loopcsi.engine.PoolLock;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * The launcher's entry point: {@code loopcsi ROLE [flags]}. It turns flags into configuration
 * before Quarkus starts, so that a role starts only what it needs (standalone starts nothing
 * Kubernetes-related and needs no kubeconfig).
 */
@QuarkusMain
public class Main {

    static final String USAGE = """
            usage: loopcsi [ROLE] [FLAGS]

            roles:
              standalone   CSI Identity + Controller + Node on one endpoint, volumes in a local directory (default)
              csc          the CSI client: loopcsi csc SERVICE VERB ... (loopcsi csc --help; run by the launcher script)
              operator     reconciles StoragePools in the cluster of $KUBECONFIG / the pod's ServiceAccount;
                           serves /q/health and /q/metrics over HTTP, no CSI

            standalone flags (each also settable as a loopcsi.* property, e.g. -Dloopcsi.capacity=20Gi):
              --endpoint URL       unix:///PATH, a PATH, or tcp://HOST:PORT (default: $CSI_ENDPOINT, else unix://./run/csi.sock)
              --data-dir DIR       pool directory holding volume images and metadata, private (0700) and locked:
                                   one driver per directory (default ./data)
              --capacity SIZE      pool capacity on this node, e.g. 20Gi (default 20Gi)
              --node-id ID         node ID reported to the CO (default: host name)
              --driver-name NAME   CSI driver name (default loopcsi.io)
              --max-volumes N      max_volumes_per_node reported by NodeGetInfo (default 0: no limit)
              --allowed-roots DIRS comma-separated directories staging/target paths must lie in (default /)
              -h, --help           this text

            operator flags:
              --http-address HOST:PORT  where /q/health and /q/metrics are served (default 0.0.0.0:8080)
              --namespace NS            namespace of the pools' controller and node components
                                        (default: $LOOPCSI_NAMESPACE, else loopcsi-system)
            """;

    private static final Map<String, String> FLAGS = Map.of(
            "--data-dir", "loopcsi.data-dir",
            "--capacity", "loopcsi.capacity",
            "--node-id", "loopcsi.node-id",
            "--driver-name", "loopcsi.driver-name",
            "--max-volumes", "loopcsi.max-volumes-per-node",
            "--allowed-roots", "loopcsi.allowed-roots");

    private static final Set<String> STANDALONE_FLAGS = union(FLAGS.keySet(), Set.of("--endpoint"));

    /**
     * The values of {@code --flag VALUE} and {@code --flag=VALUE} arguments, by flag. An unknown
     * flag or a flag without a value is a usage error (exit 64 with the usage text).
     */
    static Map<String, String> flagValues(List<String> args, Set<String> known) {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String flag = args.get(i);
            String value = null;
            int eq = flag.indexOf('=');
            if (flag.startsWith("--") && eq > 0) {
                value = flag.substring(eq + 1);
                flag = flag.substring(0, eq);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            }
            if (!known.contains(flag)) {
                usageError("unknown flag " + flag);
            }
            if (value == null) {
                usageError(flag + " needs a value");
            }
            values.put(flag, value);
        }
        return values;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> u = new java.util.HashSet<>(a);
        u.addAll(b);
        return Set.copyOf(u);
    }

    public static void main(String... args) {
        List<String> rest = List.of(args);
        String role = "standalone";
        if (!rest.isEmpty() && !rest.get(0).startsWith("-")) {
            role = rest.get(0);
            rest = rest.subList(1, rest.size());
        }
        if (rest.contains("-h") || rest.contains("--help") || role.equals("help")) {
            System.out.print(USAGE);
            return;
        }
        if (role.equals("operator")) {
            operatorProperties(rest).forEach(System::setProperty);
            Quarkus.run(args);
            return;
        }
        if (!role.equals("standalone")) {
            usageError("unknown role '" + role + "'");
        }
        Map<String, String> props = new LinkedHashMap<>();
        Map<String, String> given = flagValues(rest, STANDALONE_FLAGS);
        String endpoint = given.getOrDefault("--endpoint", System.getenv().getOrDefault("CSI_ENDPOINT", "unix://./run/csi.sock"));
        given.forEach((flag, value) -> {
            if (FLAGS.containsKey(flag)) {
                props.put(FLAGS.get(flag), value);
            }
        });
        Endpoint ep;
        try {
            ep = Endpoint.parse(endpoint);
        } catch (IllegalArgumentException e) {
            usageError(e.getMessage());
            return;
        }
        props.putAll(serverProperties(ep));
        // the pool is locked before anything else, so a second driver on it stops here (one line, exit 1)
        Path dataDir = Path.of(props.computeIfAbsent("loopcsi.data-dir", k -> dataDirDefault()));
        try {
            PoolLock.acquire(dataDir);
        } catch (PoolLock.Locked | IllegalStateException e) {
            fail(e.getMessage());
        }
        // The server binds in a private (0700) directory and the socket gets its public name only
        // once it is 0600 (Serving publishes it): no moment at which another user could connect,
        // whatever the umask (PrivateSocket says how).
        PrivateSocket socket = null;
        if (ep.isUnix()) {
            try {
                prepareSocket(ep.socket());
                socket = PrivateSocket.create(ep.socket());
            } catch (IllegalStateException e) {
                fail(e.getMessage());
            }
            props.put("quarkus.http.domain-socket", socket.bindPath().toString());
        }
        props.forEach(System::setProperty);
        System.setProperty("loopcsi.endpoint", ep.toString());
        if (socket != null) {
            Serving.publishOnStart(socket);
        }
        try {
            Quarkus.run(Serving.class, args);
        } finally {
            if (socket != null) {
                socket.close();
                socket.unpublish();
            }
        }
    }

    /** The data directory when no --data-dir is given: the loopcsi.data-dir property, $LOOPCSI_DATA_DIR, else ./data. */
    private static String dataDirDefault() {
        return System.getProperty("loopcsi.data-dir", System.getenv().getOrDefault("LOOPCSI_DATA_DIR", "data"));
    }

    /**
     * Runs once Quarkus has started, every server listening on its private path: publishes each
     * socket (0600) under its public name, then serves until asked to stop.
     */
    public static class Serving implements QuarkusApplication {

        private static final List<PrivateSocket> SOCKETS = new java.util.concurrent.CopyOnWriteArrayList<>();

        /** A socket that Quarkus's own server binds at its bindPath(), to publish once it listens. */
        static void publishOnStart(PrivateSocket socket) {
            SOCKETS.add(socket);
        }

        @Override
        public int run(String... args) {
            for (PrivateSocket socket : SOCKETS) {
                try {
                    socket.publish();
                    org.jboss.logging.Logger.getLogger(Main.class).infof("socket %s published (mode 0600)", socket.socket());
                } catch (IllegalStateException e) {
                    System.err.println("loopcsi: " + e.getMessage());
                    return 1;
                }
            }
            Quarkus.waitForExit();
            // stopping: new clients find no socket (in-flight calls keep their connections)
            SOCKETS.forEach(PrivateSocket::unpublish);
            return 0;
        }
    }

    /**
     * Settings of the operator role: QOSDK started by OperatorRole, HTTP on TCP for health and
     * metrics (the operator serves no CSI: no unix socket).
     */
    static Map<String, String> operatorProperties(List<String> flags) {
        Map<String, String> p = new LinkedHashMap<>();
        Map<String, String> given = flagValues(flags, Set.of("--http-address", "--namespace"));
        String http = given.getOrDefault("--http-address", "0.0.0.0:8080");
        if (given.containsKey("--namespace")) {
            p.put("loopcsi.operator.namespace", given.get("--namespace"));
        }
        Endpoint ep;
        try {
            ep = Endpoint.parse("tcp://" + http);
        } catch (IllegalArgumentException e) {
            usageError("--http-address: " + e.getMessage());
            return p;
        }
        p.put("loopcsi.role", "operator");
        p.putAll(serverProperties(ep));
        return p;
    }

    /** Quarkus HTTP server settings that serve gRPC on the endpoint (and nowhere else). */
    static Map<String, String> serverProperties(Endpoint ep) {
        Map<String, String> p = new LinkedHashMap<>();
        if (ep.isUnix()) {
            p.put("quarkus.http.host-enabled", "false");
            p.put("quarkus.http.domain-socket-enabled", "true");
            p.put("quarkus.http.domain-socket", ep.socket().toString());
        } else {
            p.put("quarkus.http.host-enabled", "true");
            p.put("quarkus.http.domain-socket-enabled", "false");
            p.put("quarkus.http.host", ep.host());
            p.put("quarkus.http.port", Integer.toString(ep.port()));
        }
        return p;
    }

    /**
     * Makes the socket's directory and removes a stale socket file left by a process that died.
     * A socket that still accepts connections belongs to a running driver, and a path that is not
     * a socket is someone's file: both are refused (IllegalStateException saying why).
     */
    static void prepareSocket(Path socket) {
        try {
            Files.createDirectories(socket.getParent());
            if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            BasicFileAttributes attrs = Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isOther()) {
                throw new IllegalStateException(socket + " exists and is not a socket; refusing to replace it");
            }
            try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                ch.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException stale) {
                Files.delete(socket);
                return;
            }
            throw new IllegalStateException("another process is serving on " + socket + "; stop it or choose another --endpoint");
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare socket " + socket + ": " + e.getMessage(), e);
        }
    }

    private static void usageError(String message) {
        System.err.println("loopcsi: " + message);
        System.err.print(USAGE);
        System.exit(64);
    }

    private static void fail(String message) {
        System.err.println("loopcsi: " + message);
        System.exit(1);
    }
}
