package io.loopcsi.cli.evacuate;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopSnapshot;
import io.loopcsi.handoff.LoopVolume;
import io.loopcsi.operator.api.StoragePool;

/**
 * {@code loopcsi evacuate --node X [--pool P] [--apply] [--keep-source] [--evict] [--copy-timeout D]}:
 * the plan (always printed), then with --apply the moves, progress per volume and a summary. Plain
 * Java, run by the launcher instead of Quarkus, with the cluster of $KUBECONFIG (as kubectl).
 * Exit 0 when the dry run could plan or every volume moved, 1 when one did not, 64 for a bad flag.
 */
public final class Evacuate {

    public static final String USAGE = """
            usage: loopcsi evacuate --node NODE [--pool POOL] [--apply] [--keep-source] [--evict] [--copy-timeout DURATION]

            Moves every volume of the loopcsi pools off NODE: for each PersistentVolumeClaim bound to a volume on
            NODE, a copy is made on another node of its pool (fetched by that node from NODE), then the claim is
            made again with its name, labels, annotations and size, bound to the copy. Without --apply it only
            prints the plan and changes nothing. The cluster is that of $KUBECONFIG (or ~/.kube/config).

              --node NODE            the node to empty (required)
              --pool POOL            only this StoragePool's volumes (default: every pool's)
              --apply                carry the plan out (default: a dry run)
              --keep-source          keep each old volume (and its PV, reclaim policy Retain) after the move; a later
                                     run without it deletes the kept ones
              --evict                cordon NODE and evict the pods using the claims to move; without it a claim
                                     in use by a pod is refused and named, and its pods must be stopped first
              --copy-timeout D       give up one volume's copy after D (e.g. 90s, 30m, 2h; default 1h)

            Progress is recorded on each old PV (annotation loopcsi.io/evacuation): a run that stopped is
            continued by running the same command again. A volume that cannot move is named with the reason
            and left untouched. Exit 0 when everything planned moved (or a dry run), 1 otherwise.
            """;

    private Evacuate() {
    }

    record Options(String node, String pool, boolean apply, boolean keepSource, boolean evict, Duration copyTimeout) {
    }

    static final class UsageError extends RuntimeException {
        UsageError(String m) {
            super(m);
        }
    }

    static Options parse(List<String> args) {
        String node = null;
        String pool = null;
        boolean apply = false;
        boolean keep = false;
        boolean evict = false;
        Duration timeout = Duration.ofHours(1);
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                value = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            switch (a) {
                case "--apply" -> apply = true;
                case "--keep-source" -> keep = true;
                case "--evict" -> evict = true;
                case "--node", "--pool", "--copy-timeout" -> {
                    if (value == null) {
                        if (i + 1 >= args.size()) {
                            throw new UsageError(a + " needs a value");
                        }
                        value = args.get(++i);
                    }
                    if (a.equals("--node")) {
                        node = name(a, value);
                    } else if (a.equals("--pool")) {
                        pool = name(a, value);
                    } else {
                        timeout = duration(value);
                    }
                }
                default -> throw new UsageError((a.startsWith("-") ? "unknown flag " + a : "unexpected argument '" + a + "'")
                        + " for evacuate (loopcsi evacuate --help)");
            }
        }
        if (node == null) {
            throw new UsageError("--node is required: the node to empty (loopcsi evacuate --help)");
        }
        return new Options(node, pool, apply, keep, evict, timeout);
    }

    private static String name(String flag, String v) {
        if (!v.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?") || v.length() > 253) {
            throw new UsageError(flag + ": not a Kubernetes name: '" + v + "'");
        }
        return v;
    }

    static Duration duration(String v) {
        var m = java.util.regex.Pattern.compile("([0-9]{1,6})(s|m|h)").matcher(v.strip());
        if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
            throw new UsageError("--copy-timeout: not a duration: '" + v + "' (e.g. 90s, 30m, 2h)");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
    }

    /**
     * VolumeSnapshotContents, named in full: given only apiVersion and kind, the client asks
     * discovery first and fails without a status code where the snapshot API is not installed;
     * this way the list is a 404 there.
     */
    static final ResourceDefinitionContext SNAPSHOT_CONTENTS = new ResourceDefinitionContext.Builder().withGroup("snapshot.storage.k8s.io")
            .withVersion("v1").withKind("VolumeSnapshotContent").withPlural("volumesnapshotcontents").withNamespaced(false).build();

    /** The cluster's state as the plan needs it, read now. */
    static ClusterState read(KubernetesClient client) {
        return new ClusterState(client.resources(LoopVolume.class).list().getItems(), client.resources(LoopPoolNode.class).list().getItems(),
                client.persistentVolumes().list().getItems(), client.persistentVolumeClaims().inAnyNamespace().list().getItems(),
                client.pods().inAnyNamespace().list().getItems(), client.storage().v1().storageClasses().list().getItems(),
                client.nodes().list().getItems(), optional(() -> client.resources(StoragePool.class).list().getItems()),
                optional(() -> client.resources(LoopSnapshot.class).list().getItems()),
                optional(() -> client.resources(LoopGroupSnapshot.class).list().getItems()),
                optional(() -> client.genericKubernetesResources(SNAPSHOT_CONTENTS).list().getItems()),
                Instant.now());
    }

    /**
     * A list the plan can do without: none where its API is not served (404: no StoragePool CRD
     * where the pools were installed without the operator, no snapshot API) or not readable with
     * the caller's role (403); the plan then checks no pool nodeSelector, or names no snapshot.
     */
    static <T> List<T> optional(java.util.function.Supplier<List<T>> list) {
        try {
            return list.get();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404 || e.getCode() == 403) {
                return List.of();
            }
            throw e;
        }
    }

    /** Runs the command; the exit status. */
    public static int main(List<String> args, PrintStream out, PrintStream err) {
        if (args.contains("-h") || args.contains("--help")) {
            out.print(USAGE);
            return 0;
        }
        Options o;
        try {
            o = parse(args);
        } catch (UsageError e) {
            err.println("loopcsi: " + e.getMessage());
            return 64;
        }
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            return run(client, o, out);
        } catch (KubernetesClientException e) {
            err.println("loopcsi: evacuate: " + (e.getCode() == 404 ? "the cluster has no loopcsi objects (are the loopcsi CRDs installed?): " : "")
                    + e.getMessage());
            return 1;
        }
    }

    static int run(KubernetesClient client, Options o, PrintStream out) {
        ClusterState state = read(client);
        if (client.nodes().withName(o.node()).get() == null && state.volumes().stream().noneMatch(v -> o.node().equals(v.getSpec().getNode()))) {
            out.println("loopcsi: evacuate: node " + o.node() + " is not in the cluster and holds no volume");
            return 1;
        }
        Plan plan = PlanBuilder.build(state, o.node(), o.pool());
        out.println("evacuation of node " + o.node() + (o.pool() == null ? "" : " (pool " + o.pool() + ")")
                + (o.apply() ? "" : ": dry run, nothing is changed (--apply carries it out)"));
        out.print(plan.table(o.keepSource()));
        out.flush();
        if (!o.apply()) {
            return 0;
        }
        List<Evacuation.Result> results;
        try (Evacuation e = new Evacuation(client, o.node(), o.keepSource(), o.evict(), o.copyTimeout(), out)) {
            results = e.run(plan);
        }
        out.print(summary(o.node(), results));
        out.print(plan.snapshotsLeft());
        out.flush();
        return results.stream().allMatch(r -> r.outcome() == Evacuation.Outcome.MOVED || r.outcome() == Evacuation.Outcome.MOVED_KEPT) ? 0 : 1;
    }

    static String summary(String node, List<Evacuation.Result> results) {
        StringBuilder sb = new StringBuilder("\nsummary of the evacuation of node " + node + ":\n");
        for (Evacuation.Outcome oc : Evacuation.Outcome.values()) {
            List<Evacuation.Result> of = results.stream().filter(r -> r.outcome() == oc).toList();
            if (of.isEmpty()) {
                continue;
            }
            sb.append(String.format("  %-19s %d%n", switch (oc) {
                case MOVED -> "moved";
                case MOVED_KEPT -> "moved, source kept";
                case REFUSED -> "not moved";
                case FAILED -> "failed";
            }, of.size()));
            for (Evacuation.Result r : of) {
                Move m = r.move();
                sb.append("    ").append(m.claim() == null ? "-" : m.claim()).append(" (").append(m.volumeId()).append("): ").append(r.detail())
                        .append('\n');
            }
        }
        if (results.isEmpty()) {
            sb.append("  nothing to move\n");
        }
        return sb.toString();
    }
}
