package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.operator.OperatorSettings;
import io.loopcsi.operator.StoragePoolReconciler;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.Launcher;

/**
 * A StoragePool rolled out on the REAL kube-apiserver of kube-testenv and served by two node
 * processes on this machine, optionally with its controller process: what the kube ITs that run
 * the pool's own pods share. The operator runs in this JVM as its ServiceAccount (impersonated, so
 * with exactly the committed RBAC); each node and the controller run from the packaged launcher
 * with the args and env of the pod spec the operator generated, read back from the API server,
 * each authenticated with its own ServiceAccount's token. Each node serves transfers as the
 * DaemonSet configures it: pod IP 127.0.0.1, its transfer and metrics ports on ports of their own
 * (the same across restarts, as a pod's would be), the projected transfer token of its DaemonSet pod.
 *
 * <p>The kube tests share one API server: everything a test makes must carry its own names (its
 * pool's name and driver, its own claim names or namespace); only the Node objects may be shared.
 */
final class TwoNodePool implements AutoCloseable {

    static final String NS = "loopcsi-system";
    static final Duration WAIT = Duration.ofSeconds(90);

    /**
     * What a test asks for. pool: the StoragePool's name (everything the operator derives is named
     * after it); poolYaml: the StoragePool applied with kubectl; reconciler: what the operator runs
     * (a test may want its gauges); controller: whether the controller process runs too; timing:
     * what the nodes and the operator wait (null: a deployment's defaults).
     */
    record Spec(String test, String pool, List<String> nodes, String poolYaml, Supplier<StoragePoolReconciler> reconciler, boolean controller,
            Timing timing) {
    }

    /**
     * Shorter waits for a test that waits on them, the same ratios as a deployment's defaults (20 s
     * heartbeat, 60 s freshness, 30 s recheck): a node is stale after missing four heartbeats, not
     * two, against a loaded CI machine's pauses. The nodes get the heartbeat in their environment
     * (loopcsi.node.heartbeat), the controller the freshness (loopcsi.controller.node-stale-after), the
     * operator in this JVM freshness and recheck (OperatorSettings' properties, cleared again in
     * {@link #close()}).
     */
    record Timing(Duration nodeHeartbeat, Duration nodeReportFresh, Duration recheck) {
        static final Timing QUICK = new Timing(Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofSeconds(3));
    }

    private final Spec spec;
    private final Path root;
    private final KubernetesClient admin;
    private KubernetesClient asOperator;
    private Operator operator;
    private final Map<String, Launcher> nodes = new LinkedHashMap<>();
    private final Map<String, PodProcess> nodePods = new HashMap<>();
    private final Map<String, Path> nodeKubeconfig = new HashMap<>();
    private final Map<String, Integer> transferPorts = new HashMap<>();
    private final Map<String, Integer> metricsPorts = new HashMap<>();
    private Launcher controller;
    private Path controllerSocket;
    private final List<AutoCloseable> closeFirst = new java.util.ArrayList<>();

    private TwoNodePool(Spec spec, Path root, KubernetesClient admin) {
        this.spec = spec;
        this.root = root;
        this.admin = admin;
    }

    /** Skips the calling test class (assumption) without a test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG). */
    static void assumeCluster(String test) {
        boolean configured = "1".equals(System.getenv("LOOPCSI_KUBE_TEST")) && System.getenv("KUBECONFIG") != null;
        if (!configured) {
            System.out.println("SKIPPED " + test + ": no test cluster (LOOPCSI_KUBE_TEST=1 and KUBECONFIG unset); `make test-kube`");
        }
        assumeTrue(configured, "no test cluster");
    }

    /**
     * The root directory made and the operator's manifests applied. The caller keeps the fixture
     * before {@link #rollOut}, so that its {@link #close()} stops whatever a failed roll-out started.
     */
    static TwoNodePool create(Spec spec) throws Exception {
        assumeCluster(spec.test());
        // short: kubelet-style socket paths below it must stay under 108 bytes (PrivateSocket)
        Path root = Files.createTempDirectory(spec.pool());
        Kubectl.ok("apply", "-k", "kubernetes/");
        return new TwoNodePool(spec, root, new KubernetesClientBuilder().build());
    }

    /**
     * The pool rolled out, its nodes (and controller) serving. beforeOperator runs with the admin
     * client once the CRDs are established, before the operator starts (a test's removal of what an
     * earlier run left).
     */
    TwoNodePool rollOut(java.util.function.Consumer<KubernetesClient> beforeOperator) throws Exception {
        for (String crd : List.of("storagepools", "loopvolumes", "loopsnapshots", "loopgroupsnapshots", "looppoolnodes", "looptransfers")) {
            String name = crd + ".loopcsi.io";
            await("CRD " + name, () -> admin.apiextensions().v1().customResourceDefinitions().withName(name).get().getStatus().getConditions()
                    .stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        }
        beforeOperator.accept(admin);
        if (spec.timing() != null) {
            System.setProperty(OperatorSettings.RECHECK_PROPERTY, spec.timing().recheck().toSeconds() + "s");
            System.setProperty(OperatorSettings.NODE_REPORT_FRESH_PROPERTY, spec.timing().nodeReportFresh().toSeconds() + "s");
        }
        Config cfg = Config.autoConfigure(null);
        cfg.setImpersonateUsername("system:serviceaccount:" + NS + ":loopcsi-operator");
        asOperator = new KubernetesClientBuilder().withConfig(cfg).build();
        System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, NS);
        operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
        operator.register(spec.reconciler().get());
        operator.start();
        for (String n : spec.nodes()) { // as kubelets register them
            if (admin.nodes().withName(n).get() == null) {
                admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(n).addToLabels("kubernetes.io/hostname", n).endMetadata()
                        .build()).create();
            }
        }
        Kubectl.apply(spec.poolYaml());
        DaemonSet ds = await("node DaemonSet", () -> admin.apps().daemonSets().inNamespace(NS).withName(nodeAccount()).get());
        for (String n : spec.nodes()) {
            Path hostRoot = Files.createDirectories(root.resolve(n));
            Files.createDirectories(hostRoot.resolve("var/lib/kubelet/plugins_registry")); // kubelet's own directories
            nodePods.put(n, nodePod(ds, n));
            nodeKubeconfig.put(n, serviceAccountKubeconfig(nodeAccount(), root.resolve(n + ".kubeconfig")));
            launchNode(n);
        }
        for (String n : spec.nodes()) { // started together, as kubelets would: a JVM's start here is 5-20 s
            awaitNode(n);
        }
        if (spec.controller()) {
            String name = "loopcsi-" + spec.pool() + "-controller";
            Deployment dep = await("controller Deployment", () -> admin.apps().deployments().inNamespace(NS).withName(name).get());
            PodProcess c = PodProcess.of(dep.getSpec().getTemplate().getSpec(), "loopcsi", Map.of(), root.resolve("controller-host"),
                    root.resolve("controller-pod"), Map.of(9090, Launcher.freePort()));
            Path kc = serviceAccountKubeconfig(name, root.resolve("controller.kubeconfig"));
            controllerSocket = endpoint(c.args());
            Files.createDirectories(controllerSocket.getParent());
            controller = Launcher.start(root, "controller", c.args(), env(c, kc)).awaitCsi(controllerSocket);
        }
        return this;
    }

    // ---- what the tests use ---------------------------------------------------------------------

    /** c, closed by {@link #close()} before the processes stop (what a test runs against them, e.g. the controller's code). */
    <T extends AutoCloseable> T closeFirst(T c) {
        closeFirst.add(0, c);
        return c;
    }

    KubernetesClient admin() {
        return admin;
    }

    Path root() {
        return root;
    }

    Path controllerSocket() {
        return controllerSocket;
    }

    Launcher node(String n) {
        return nodes.get(n);
    }

    /** The controller process (null without one). */
    Launcher controller() {
        return controller;
    }

    PodProcess nodePod(String n) {
        return nodePods.get(n);
    }

    int transferPort(String n) {
        return transferPorts.get(n);
    }

    int metricsPort(String n) {
        return metricsPorts.get(n);
    }

    /** The node's own ServiceAccount and DaemonSet (the operator gives both this name). */
    String nodeAccount() {
        return "loopcsi-" + spec.pool() + "-node";
    }

    Path socketOf(String n) {
        return endpoint(nodePods.get(n).args());
    }

    Path kubeletDir(String n) {
        return root.resolve(n).resolve("var/lib/kubelet");
    }

    Path dataDir(String n) {
        List<String> a = nodePods.get(n).args();
        return Path.of(a.get(a.indexOf("--data-dir") + 1));
    }

    /** The node process stopped (SIGTERM, as kubelet stops a container) and started again from the same pod spec. */
    void restart(String n) throws Exception {
        nodes.get(n).stop();
        startNode(n);
    }

    /**
     * The node process killed (SIGKILL, as a machine that dies or the OOM killer takes it: no
     * shutdown hook, nothing saved on the way out) and started again from the same pod spec.
     */
    void killAndRestart(String n) throws Exception {
        nodes.get(n).kill();
        startNode(n);
    }

    /** The node process stopped and started again from the DaemonSet's template ds, as its rollout would. */
    void restartFrom(DaemonSet ds, String n) throws Exception {
        nodes.get(n).stop();
        nodePods.put(n, nodePod(ds, n));
        startNode(n);
    }

    // ---- how -------------------------------------------------------------------------------------

    /**
     * The node pod on n as kubelet would run it: its pod IP 127.0.0.1, its metrics port and its
     * transfer port (the same one across restarts, as a pod's IP and port would be) on ports of
     * their own.
     */
    private PodProcess nodePod(DaemonSet ds, String n) throws Exception {
        if (!transferPorts.containsKey(n)) {
            transferPorts.put(n, Launcher.freePort());
            metricsPorts.put(n, Launcher.freePort());
        }
        return PodProcess.of(ds.getSpec().getTemplate().getSpec(), "loopcsi", Map.of("spec.nodeName", n, "status.podIP", "127.0.0.1"),
                root.resolve(n), root.resolve(n + "-pod"), Map.of(9090, metricsPorts.get(n), 9810, transferPorts.get(n)));
    }

    private void startNode(String n) throws Exception {
        launchNode(n);
        awaitNode(n);
    }

    /** The node process started from its pod spec (with its projected token), not yet waited for. */
    private void launchNode(String n) throws Exception {
        PodProcess pod = nodePods.get(n);
        Path tokenFile = Path.of(pod.env().get("LOOPCSI_NODE_TRANSFER_TOKEN_FILE"));
        Files.createDirectories(tokenFile.getParent());
        Files.writeString(tokenFile, transferToken(n));
        nodes.put(n, Launcher.start(root, n, pod.args(), env(pod, nodeKubeconfig.get(n))));
    }

    /** The node launched by {@link #launchNode} serving CSI and published in its LoopPoolNode. */
    private void awaitNode(String n) throws Exception {
        nodes.get(n).awaitCsi(socketOf(n));
        await(n + " publishes its capacity and transfer endpoint", () -> {
            LoopPoolNode p = admin.resources(LoopPoolNode.class).withName(spec.pool() + "." + n).get();
            return p != null && p.getStatus() != null && p.getStatus().getTransferAddress() != null ? p : null;
        });
    }

    /**
     * The projected token kubelet would give the node pod on n (audience loopcsi.io/transfer, bound
     * to the pod): the DaemonSet's own pod for n, bound to n as the scheduler would (kube-testenv runs
     * none); a pod made by hand would be deleted by the DaemonSet controller, and its token with it.
     */
    private String transferToken(String n) {
        DaemonSet ds = admin.apps().daemonSets().inNamespace(NS).withName(nodeAccount()).get();
        Pod pod = await("the DaemonSet's pod for " + n, () -> admin.pods().inNamespace(NS).list().getItems().stream()
                .filter(p -> p.getMetadata().getOwnerReferences().stream().anyMatch(o -> ds.getMetadata().getUid().equals(o.getUid())))
                .filter(p -> n.equals(targetNode(p))).findFirst().orElse(null));
        if (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
            admin.bindings().inNamespace(NS).resource(new io.fabric8.kubernetes.api.model.BindingBuilder().withNewMetadata()
                    .withName(pod.getMetadata().getName()).endMetadata().withNewTarget().withApiVersion("v1").withKind("Node").withName(n)
                    .endTarget().build()).create();
        }
        String podName = pod.getMetadata().getName();
        Pod bound = await("pod " + podName + " on " + n, () -> {
            var p = admin.pods().inNamespace(NS).withName(podName).get();
            return p != null && n.equals(p.getSpec().getNodeName()) ? p : null;
        });
        return admin.serviceAccounts().inNamespace(NS).withName(nodeAccount()).tokenRequest(
                new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder().withNewSpec()
                        .withAudiences(io.loopcsi.transfer.kube.TokenReviewIdentity.AUDIENCE).withExpirationSeconds(3600L)
                        .withNewBoundObjectRef().withApiVersion("v1").withKind("Pod").withName(podName).withUid(bound.getMetadata().getUid())
                        .endBoundObjectRef().endSpec().build()).getStatus().getToken();
    }

    /** The node a DaemonSet pod is for: its nodeName once bound, else the node its required affinity names. */
    static String targetNode(Pod p) {
        if (p.getSpec().getNodeName() != null && !p.getSpec().getNodeName().isEmpty()) {
            return p.getSpec().getNodeName();
        }
        var a = p.getSpec().getAffinity();
        if (a == null || a.getNodeAffinity() == null || a.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
            return null;
        }
        return a.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms().stream()
                .flatMap(t -> t.getMatchFields() == null ? java.util.stream.Stream.empty() : t.getMatchFields().stream())
                .filter(f -> "metadata.name".equals(f.getKey()) && f.getValues().size() == 1).map(f -> f.getValues().get(0)).findFirst()
                .orElse(null);
    }

    private Map<String, String> env(PodProcess pod, Path kubeconfig) {
        Map<String, String> env = new HashMap<>(pod.env());
        env.put("KUBECONFIG", kubeconfig.toString());
        if (spec.timing() != null) {
            // each role reads its own: the node its heartbeat, the controller when a node's heartbeat is stale
            env.put("LOOPCSI_NODE_HEARTBEAT", spec.timing().nodeHeartbeat().toSeconds() + "s");
            // the copies of ended transfers' sources go at the next sweep (default every minute)
            env.put("LOOPCSI_NODE_TRANSFER_SWEEP", spec.timing().nodeHeartbeat().toSeconds() + "s");
            env.put("LOOPCSI_CONTROLLER_NODE_STALE_AFTER", spec.timing().nodeReportFresh().toSeconds() + "s");
            // the controller deletes the transfers that are over at its next sweep (default every minute)
            env.put("LOOPCSI_CONTROLLER_TRANSFER_SWEEP", spec.timing().nodeHeartbeat().toSeconds() + "s");
        }
        return env;
    }

    private static Path endpoint(List<String> args) {
        return Path.of(args.get(args.indexOf("--endpoint") + 1).substring("unix://".length()));
    }

    /** A kubeconfig with the ServiceAccount's token, as a pod of it authenticates. */
    private Path serviceAccountKubeconfig(String sa, Path file) throws Exception {
        Secret token = await("token of " + sa, () -> admin.secrets().inNamespace(NS).list().getItems().stream()
                .filter(s -> "kubernetes.io/service-account-token".equals(s.getType()) && s.getMetadata().getAnnotations() != null
                        && sa.equals(s.getMetadata().getAnnotations().get("kubernetes.io/service-account.name")))
                .findFirst().orElse(null));
        String jwt = new String(Base64.getDecoder().decode(token.getData().get("token")), StandardCharsets.UTF_8);
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "%s", certificate-authority-data: "%s"}}]
                users: [{name: %s, user: {token: "%s"}}]
                contexts: [{name: x, context: {cluster: c, user: %s}}]
                current-context: x
                """.formatted(admin.getConfiguration().getMasterUrl(), token.getData().get("ca.crt"), sa, jwt, sa));
        return file;
    }

    /**
     * The processes stopped, the operator too; their logs kept in target/real-tier-logs/ (prefixed
     * with the pool's name), the loop devices, mounts and files under the root released.
     */
    @Override
    public void close() throws Exception {
        try {
            for (AutoCloseable c : closeFirst) {
                c.close();
            }
            if (controller != null) {
                controller.close();
            }
            for (Launcher l : nodes.values()) {
                l.close();
            }
            if (operator != null) {
                operator.stop();
            }
            System.clearProperty(OperatorSettings.RECHECK_PROPERTY);
            System.clearProperty(OperatorSettings.NODE_REPORT_FRESH_PROPERTY);
            Path logs = Files.createDirectories(Path.of("target/real-tier-logs"));
            try (var files = Files.list(root)) {
                for (Path f : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                    Files.copy(f, logs.resolve(spec.pool() + "-" + f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            KernelCleanup.releaseAndDelete(root);
        } finally {
            if (asOperator != null) {
                asOperator.close();
            }
            admin.close();
        }
    }

    static <T> T await(String what, Supplier<T> check) {
        return StoragePoolOperatorKubeTest.await(what, WAIT, check);
    }
}
