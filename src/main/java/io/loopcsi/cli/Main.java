package io.loopcsi.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.loopcsi.csi.CsiServer;
import io.loopcsi.csi.Endpoint;
import io.loopcsi.csi.PrivateSocket;
import io.loopcsi.csi.ServingStarted;
import io.loopcsi.engine.HostRequirements;
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
              controller   a pool's CSI Identity + Controller on a unix socket: volumes are made by the nodes,
                           through LoopVolume objects in the cluster of $KUBECONFIG / the pod's ServiceAccount
              node         a pool's CSI Identity + Node on a unix socket, volumes in a local directory; carries out
                           this node's LoopVolumes, publishes its capacity, registers itself with kubelet
              doctor       checks whether this machine can host a pool: a verdict per line, a fix per failure;
                           exit 0 when it can, 1 when it cannot
              evacuate     moves every claimed volume of the pools off a node, claims kept (loopcsi evacuate --help);
                           a dry run unless --apply; the cluster of $KUBECONFIG

            every role:
              --version            driver, CSI spec, Quarkus and JDK versions, the runtime (JVM or native) and the build's commit
              --debug              a failed start prints its stack trace (otherwise one line says what failed)
              -h, --help           this text
            A bad flag or value is one line and exit 64; a start that fails is one line and exit 1.

            standalone flags (each also settable as a loopcsi.* property, e.g. -Dloopcsi.capacity=20Gi):
              --endpoint URL       unix:///PATH, a PATH, or tcp://HOST:PORT (default: $CSI_ENDPOINT, else unix://./run/csi.sock)
              --data-dir DIR       pool directory holding volume images and metadata, private (0700) and locked:
                                   one driver per directory (default ./data)
              --capacity SIZE      pool capacity on this node, e.g. 20Gi (default 20Gi): the hard cap
              --host-reserve SIZE  free space of the host filesystem the pool never counts as available (default 0)
              --thin-overcommit R  thin volumes' sizes may total R x the capacity, 1 to 100 (default 1: none); the host's
                                   free space still bounds what every volume may write
              --node-id ID         node ID reported to the CO (default: host name)
              --driver-name NAME   CSI driver name (default loopcsi.io)
              --max-volumes N      max_volumes_per_node reported by NodeGetInfo (default 0: no limit)
              --allowed-roots DIRS comma-separated directories staging/target paths must lie in (default /)
              --metrics-address HOST:PORT  where /q/metrics and /q/health are served over HTTP (default: not served)

            operator flags:
              --http-address HOST:PORT  where /q/health and /q/metrics are served (default 0.0.0.0:8080)
              --namespace NS            namespace of the pools' controller and node components
                                        (default: $LOOPCSI_NAMESPACE, else loopcsi-system)

            controller and node flags (CSI is served only on the socket; TCP serves only /q/health and /q/metrics):
              --endpoint URL            unix:///PATH or a PATH (default: $CSI_ENDPOINT, else unix://./run/csi.sock)
              --driver-name NAME        the pool's CSI driver name (default loopcsi.io)
              --pool NAME               the StoragePool served (required)
              --http-address HOST:PORT  where /q/health and /q/metrics are served (default: not served)
            node only:
              --node-name NAME          this node's name, the topology value (in a pod: spec.nodeName; default: host name)
              --data-dir DIR            pool directory on this node (default ./data)
              --capacity SIZE           pool capacity on this node (default 20Gi)
              --host-reserve SIZE, --thin-overcommit R  as for standalone
              --registration-socket PATH  kubelet plugin registration socket
                                        (default /var/lib/kubelet/plugins_registry/DRIVER-reg.sock)
              --max-volumes N, --allowed-roots DIRS   as for standalone

            doctor flags:
              --data-dir DIR            the pool directory to check (need not exist yet; default ./data)
              --capacity SIZE           the capacity the pool is to offer, against the free space (default 20Gi)
              --format table|json       json for scripts (default table)
              --remove-orphan ID        delete the files of one volume or snapshot the node's audit lists as
                                        unclaimed (no object names it), instead of checking; never one in use
            """;

    public static void main(String... args) {
        List<String> rest = List.of(args);
        String role = Flags.STANDALONE;
        if (!rest.isEmpty() && !rest.get(0).startsWith("-")) {
            role = rest.get(0);
            rest = rest.subList(1, rest.size());
        }
        if (role.equals("csc")) {
            // the JVM launcher starts csc as a class of its own (a short-lived JVM); the native
            // executable, which has no JVM to start it with, carries it as this role
            io.loopcsi.cli.csc.Csc.main(rest.toArray(String[]::new));
            return;
        }
        if (role.equals("evacuate")) {
            // a client of the cluster, like csc of a socket: plain Java, no Quarkus application
            System.exit(io.loopcsi.cli.evacuate.Evacuate.main(rest, System.out, System.err));
        }
        if (rest.contains("-h") || rest.contains("--help") || role.equals("help")) {
            System.out.print(USAGE);
            return;
        }
        if (rest.contains("--version") || role.equals("version")) {
            System.out.print(Version.text());
            return;
        }
        if (!Flags.ROLES.contains(role)) {
            usageError("unknown role '" + role + "' (one of standalone, controller, node, operator, doctor, csc, evacuate; loopcsi --help)");
        }
        Flags.Parsed parsed = parse(role, rest);
        debug = parsed.has("--debug");
        if (role.equals(Flags.DOCTOR)) {
            System.exit(doctor(parsed));
        }
        Map<String, String> props = role.equals(Flags.OPERATOR) ? operatorProperties(parsed) : csiRoleProperties(role, parsed);
        addresses = new java.util.ArrayList<>();
        if (props.containsKey("loopcsi.endpoint")) {
            addresses.add("--endpoint " + props.get("loopcsi.endpoint"));
        }
        if ("true".equals(props.get("quarkus.http.host-enabled"))) {
            addresses.add((role.equals(Flags.STANDALONE) ? "--metrics-address " : "--http-address ") + props.get("quarkus.http.host") + ":" + props.get("quarkus.http.port"));
        }
        if (role.equals(Flags.OPERATOR)) {
            props.forEach(System::setProperty);
            Quarkus.run(Serving.class, Main::exit, args);
            return;
        }
        if (!role.equals(Flags.STANDALONE) && !parsed.given().containsKey("--pool")) {
            usageError("--pool is required for the " + role + " role: the StoragePool it serves");
        }
        Endpoint ep = Endpoint.parse(props.get("loopcsi.endpoint"));
        if (!role.equals(Flags.CONTROLLER)) { // the controller role has no pool directory and runs no volume commands
            // refuse to serve rather than fail a user's volume later (docs/architecture.md)
            List<HostRequirements.Missing> missing = HostRequirements.check();
            if (!missing.isEmpty()) {
                fail(HostRequirements.message(missing) + " (loopcsi doctor checks everything)");
            }
            lockPool(role, Path.of(props.computeIfAbsent("loopcsi.data-dir", k -> dataDirDefault())));
        }
        // CsiServer binds in a private (0700) directory and the socket gets its public name only
        // once it is 0600 (Serving publishes it): no moment at which another user could connect,
        // whatever the umask (PrivateSocket says how).
        PrivateSocket socket = null;
        if (ep.isUnix()) {
            try {
                PrivateSocket.prepare(ep.socket());
                socket = PrivateSocket.create(ep.socket());
            } catch (IllegalStateException e) {
                fail(e.getMessage());
            }
            props.put(CsiServer.BIND_PATH, socket.bindPath().toString());
        }
        props.forEach(System::setProperty);
        if (socket != null) {
            PrivateSocket.publishOnStart(socket);
        }
        try {
            Quarkus.run(Serving.class, Main::exit, args);
        } finally {
            if (socket != null) {
                socket.close();
                socket.unpublish();
            }
        }
    }

    /** --debug: stack traces of a failed start are printed (otherwise one line says what failed). */
    private static boolean debug;
    /** Where this process listens, as flags, for the line that says one was in use. */
    private static List<String> addresses = List.of();

    /** A role's flags, checked; a usage error ends the process (exit 64). */
    static Flags.Parsed parse(String role, List<String> args) {
        try {
            return Flags.parse(role, args);
        } catch (Flags.UsageError e) {
            usageError(e.getMessage());
            return null;
        }
    }

    /**
     * Settings of the standalone, controller and node roles from their checked flags: the CSI
     * endpoint (--endpoint, else $CSI_ENDPOINT, else ./run/csi.sock; unix only outside standalone).
     */
    static Map<String, String> csiRoleProperties(String role, Flags.Parsed parsed) {
        Map<String, String> props = new LinkedHashMap<>();
        Endpoint ep;
        if (parsed.given().containsKey("--endpoint")) {
            ep = Endpoint.parse(parsed.properties().get("loopcsi.endpoint"));
        } else {
            String env = System.getenv().getOrDefault("CSI_ENDPOINT", "unix://./run/csi.sock");
            try {
                ep = Endpoint.parse(env);
            } catch (IllegalArgumentException e) {
                usageError("$CSI_ENDPOINT: " + e.getMessage());
                return props;
            }
        }
        if (!role.equals(Flags.STANDALONE)) {
            if (!ep.isUnix()) {
                usageError("--endpoint: the " + role + " role serves CSI on a unix socket only: unix:///PATH");
            }
            props.put("loopcsi.role", role);
        }
        props.putAll(csiProperties(ep));
        props.putAll(parsed.properties()); // --http-address turns Quarkus' TCP listener back on
        props.put("loopcsi.endpoint", ep.toString());
        return props;
    }

    /** loopcsi doctor [--data-dir DIR] [--capacity SIZE] [--format table|json] [--remove-orphan ID]: the exit status. */
    private static int doctor(Flags.Parsed parsed) {
        Map<String, String> p = parsed.properties();
        if (p.containsKey("loopcsi.doctor.remove-orphan")) {
            return io.loopcsi.cli.doctor.Doctor.removeOrphan(Path.of(p.getOrDefault("loopcsi.data-dir", dataDirDefault())),
                    p.get("loopcsi.doctor.remove-orphan"), System.out);
        }
        return io.loopcsi.cli.doctor.Doctor.main(Path.of(p.getOrDefault("loopcsi.data-dir", dataDirDefault())),
                io.loopcsi.engine.Sizes.parse(p.getOrDefault("loopcsi.capacity", "20Gi")), p.getOrDefault("loopcsi.doctor.format", "table"),
                System.out);
    }

    /**
     * How the process ends once Quarkus has run: a start that failed is one line naming what
     * failed (the innermost message), unless --debug asked for Quarkus' stack trace.
     */
    private static void exit(int status, Throwable failure) {
        // Quarkus logs nothing itself when the application has its own exit handler
        if (failure != null && debug) {
            failure.printStackTrace();
        } else if (failure != null) {
            System.err.println("loopcsi: cannot start: " + StartFailure.describe(failure, addresses) + " (--debug shows the stack trace)");
        }
        System.exit(status);
    }

    /**
     * Takes the pool directory's lock before anything else reads it. Standalone fails at once (a
     * second driver on one directory is a mistake to report, in one line, exit 1); the node role
     * waits up to NODE_LOCK_WAIT, saying so, because during a DaemonSet update the old pod may
     * still be stopping while the new one starts.
     */
    private static void lockPool(String role, Path dataDir) {
        try {
            if (role.equals("node")) {
                PoolLock.acquire(dataDir, NODE_LOCK_WAIT, msg -> System.err.println("loopcsi: " + msg));
            } else {
                PoolLock.acquire(dataDir);
            }
        } catch (PoolLock.Locked e) {
            fail(e.getMessage());
        } catch (IllegalStateException e) {
            fail(e.getMessage() + "; choose another --data-dir (loopcsi doctor --data-dir DIR checks one)");
        } catch (InterruptedException e) {
            fail("interrupted while waiting for the lock of " + dataDir);
        }
    }

    /** How long a node waits for the pool lock: longer than the node pod's termination grace period. */
    static final java.time.Duration NODE_LOCK_WAIT = java.time.Duration.ofSeconds(90);

    /** The data directory when no --data-dir is given: the loopcsi.data-dir property, $LOOPCSI_DATA_DIR, else ./data. */
    private static String dataDirDefault() {
        return System.getProperty("loopcsi.data-dir", System.getenv().getOrDefault("LOOPCSI_DATA_DIR", "data"));
    }

    /**
     * Runs once Quarkus has started, every server listening on its private path: publishes each
     * socket (0600) under its public name, fires {@link ServingStarted}, then serves until asked to stop.
     */
    public static class Serving implements QuarkusApplication {

        @Override
        public int run(String... args) {
            for (PrivateSocket socket : PrivateSocket.toPublish()) {
                try {
                    socket.publish();
                    org.jboss.logging.Logger.getLogger(Main.class).infof("socket %s published (mode 0600)", socket.socket());
                } catch (IllegalStateException e) {
                    System.err.println("loopcsi: " + e.getMessage());
                    return 1;
                }
            }
            io.quarkus.arc.Arc.container().beanManager().getEvent().select(ServingStarted.class).fire(new ServingStarted());
            Quarkus.waitForExit();
            // stopping: new clients find no socket (in-flight calls keep their connections)
            PrivateSocket.toPublish().forEach(PrivateSocket::unpublish);
            return 0;
        }
    }

    /**
     * Settings of the operator role: QOSDK started by OperatorRole, HTTP on TCP for health and
     * metrics (the operator serves no CSI: no unix socket).
     */
    static Map<String, String> operatorProperties(Flags.Parsed parsed) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("loopcsi.role", "operator");
        p.putAll(serverProperties(Endpoint.parse("tcp://0.0.0.0:8080")));
        p.putAll(parsed.properties());
        return p;
    }

    /**
     * Settings of a role that serves CSI: csi.CsiServer (grpc-java) serves the endpoint, so Quarkus'
     * HTTP server listens nowhere (it would answer CSI calls too, with Vert.x's stricter HTTP/2).
     */
    static Map<String, String> csiProperties(Endpoint ep) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("loopcsi.endpoint", ep.toString());
        p.put("quarkus.http.host-enabled", "false");
        p.put("quarkus.http.domain-socket-enabled", "false");
        return p;
    }

    /** Quarkus HTTP server settings that serve HTTP on the endpoint (and nowhere else). */
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

    /** A usage error: one line, exit 64 (BSD sysexits' EX_USAGE, as csc). */
    private static void usageError(String message) {
        System.err.println("loopcsi: " + message);
        System.exit(64);
    }

    private static void fail(String message) {
        System.err.println("loopcsi: " + message);
        System.exit(1);
    }
}
