package io.loopcsi.operator.desired;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.loopcsi.operator.api.PoolResources;
import io.loopcsi.operator.api.PoolRuntime;
import io.loopcsi.operator.api.StoragePool;

/**
 * The requests and limits of every container the pool runs: the role's default, with what the
 * pool's spec.resources sets for that role laid over it (per resource name), and the check that
 * refuses a spec whose containers could not run (the reconciler then leaves the workloads as they
 * are). Every container has a memory limit.
 *
 * <p>Where the defaults come from (measured; docs/performance.md, "What a node costs"):
 * <ul>
 * <li>controller and node: JDK 17, the launcher's memory flags (./loopcsi jvm_memory_opts), RSS of
 * the node role idle 176 MiB with a 64 MiB heap; its non-heap (metaspace ~50 MiB, symbols,
 * class space, code, stacks, the JVM itself) ~110 MiB, which is why the launcher gives the heap
 * the limit less 112 MiB, and why a limit under 160 MiB (a 48 MiB heap: the idle live set is
 * 15-25 MiB, 1000 volumes add ~30 KiB each) is refused.
 * <li>node, native executable (spec.runtime: native, the default): its own memory (anonymous) is
 * 18 MiB idle; the rest of its 80 MiB RSS is clean pages of the executable, page cache the kernel
 * reclaims under the limit. Under a 64 MiB memory cgroup it served 1000 volumes kept and 200
 * create+delete pairs with a cgroup peak of 39 MiB and no OOM kill (MemoryLimitIT, native), and it
 * started and served under 48 MiB with a cold page cache: request 64Mi, limit 128Mi (-Xmx96m),
 * least 64Mi. The native controller keeps the JVM's sizes: its informers grow with the pool's
 * LoopVolumes and it has not been measured apart.
 * <li>sidecars (Go; they cannot run here): kubernetes-csi's own chart for csi-driver-nfs
 * (charts/latest/csi-driver-nfs/values.yaml) requests 20Mi and limits csi-provisioner and
 * csi-resizer to 400Mi, csi-snapshotter to 200Mi; the sidecars' informers grow with the cluster's
 * PersistentVolumes and claims, so the limit is a guard against a leak, not a fit to idle use.
 * The request stays 32Mi, the least of them is taken as the chart's request.
 * </ul>
 */
public final class ContainerResources {

    public static final String REASON = "InvalidResources";

    /** A role's defaults and the least memory limit it runs with, for one runtime. */
    record Sizes(String requestMemory, String requestCpu, String limitMemory, String minLimit) {
    }

    /** A role: its field in spec.resources and its sizes on the JVM and as the native executable. */
    record Role(String field, Function<PoolResources, ResourceRequirements> spec, Sizes jvm, Sizes nativ, String what) {
        Sizes sizes(StoragePool pool) {
            return pool.getSpec().getRuntime() == PoolRuntime.JVM ? jvm : nativ;
        }
    }

    private static final Sizes JVM_ROLE = new Sizes("160Mi", "20m", "256Mi", "160Mi");
    static final Role CONTROLLER = new Role("controller", PoolResources::getController, JVM_ROLE, JVM_ROLE, "the controller role");
    static final Role NODE = new Role("node", PoolResources::getNode, new Sizes("192Mi", "20m", "256Mi", "160Mi"),
            new Sizes("64Mi", "20m", "128Mi", "64Mi"), "the node role");
    private static final Sizes SIDECAR = new Sizes("32Mi", "10m", "400Mi", "20Mi");
    static final Role SIDECARS = new Role("sidecars", PoolResources::getSidecars, SIDECAR, SIDECAR, "a CSI sidecar");
    /** csi-snapshotter's default limit, half the others' (kubernetes-csi's csi-driver-nfs chart, see above). */
    static final String SNAPSHOTTER_LIMIT = "200Mi";

    private ContainerResources() {
    }

    public static ResourceRequirements controller(StoragePool pool) {
        return merged(pool, CONTROLLER, CONTROLLER.sizes(pool).limitMemory());
    }

    public static ResourceRequirements node(StoragePool pool) {
        return merged(pool, NODE, NODE.sizes(pool).limitMemory());
    }

    /** A sidecar's, by container name (csi-snapshotter has its own default limit). */
    public static ResourceRequirements sidecar(StoragePool pool, String container) {
        return merged(pool, SIDECARS, "csi-snapshotter".equals(container) ? SNAPSHOTTER_LIMIT : SIDECARS.sizes(pool).limitMemory());
    }

    /**
     * What is wrong with spec.resources, one sentence per problem naming the field, or empty: a
     * quantity that does not parse, a limit below its request, a memory limit below what the role
     * needs. A request set above the default limit, with no limit set, raises the limit to it
     * instead (the admin asked for more, not for an invalid pod).
     */
    public static Optional<String> problem(StoragePool pool) {
        List<String> problems = new ArrayList<>();
        for (Role role : List.of(CONTROLLER, NODE, SIDECARS)) {
            String prefix = "spec.resources." + role.field() + ".";
            ResourceRequirements own = own(pool, role);
            if (own == null) {
                continue;
            }
            List<String> unparsable = new ArrayList<>();
            check(own.getRequests(), prefix + "requests.", unparsable);
            check(own.getLimits(), prefix + "limits.", unparsable);
            problems.addAll(unparsable);
            if (!unparsable.isEmpty()) {
                continue;
            }
            Sizes sizes = role.sizes(pool);
            ResourceRequirements r = merged(pool, role, sizes.limitMemory());
            for (Map.Entry<String, Quantity> limit : r.getLimits().entrySet()) {
                Quantity request = r.getRequests().get(limit.getKey());
                if (request != null && amount(limit.getValue()).compareTo(amount(request)) < 0) {
                    problems.add(prefix + "limits." + limit.getKey() + " (" + limit.getValue() + ") is below " + prefix + "requests."
                            + limit.getKey() + " (" + request + "); a limit must be at least the request");
                }
            }
            Quantity memory = r.getLimits().get("memory");
            Quantity min = new Quantity(sizes.minLimit());
            if (memory != null && amount(memory).compareTo(amount(min)) < 0) {
                problems.add(prefix + "limits.memory (" + memory + ") is below " + sizes.minLimit() + ", the least " + role.what()
                        + " runs in" + (role.jvm().equals(role.nativ()) ? "" : " (spec.runtime: " + (pool.getSpec().getRuntime() == PoolRuntime.JVM
                                ? "jvm" : "native") + ")") + "; set at least "
                        + sizes.minLimit());
            }
        }
        return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
    }

    private static ResourceRequirements own(StoragePool pool, Role role) {
        PoolResources all = pool.getSpec().getResources();
        return all == null ? null : role.spec().apply(all);
    }

    private static ResourceRequirements merged(StoragePool pool, Role role, String limitMemory) {
        Sizes sizes = role.sizes(pool);
        Map<String, Quantity> requests = new TreeMap<>(Map.of("memory", new Quantity(sizes.requestMemory()), "cpu", new Quantity(sizes.requestCpu())));
        Map<String, Quantity> limits = new TreeMap<>(Map.of("memory", new Quantity(limitMemory)));
        ResourceRequirements own = own(pool, role);
        Map<String, Quantity> ownLimits = own == null || own.getLimits() == null ? Map.of() : own.getLimits();
        if (own != null && own.getRequests() != null) {
            requests.putAll(own.getRequests());
            for (Map.Entry<String, Quantity> e : own.getRequests().entrySet()) {
                Quantity limit = limits.get(e.getKey());
                if (!ownLimits.containsKey(e.getKey()) && limit != null && parses(e.getValue()) && amount(limit).compareTo(amount(e.getValue())) < 0) {
                    limits.put(e.getKey(), e.getValue());
                }
            }
        }
        limits.putAll(ownLimits);
        ResourceRequirements r = new ResourceRequirements();
        r.setRequests(requests);
        r.setLimits(limits);
        return r;
    }

    private static void check(Map<String, Quantity> quantities, String prefix, List<String> problems) {
        if (quantities != null) {
            quantities.forEach((name, q) -> {
                if (!parses(q)) {
                    problems.add(prefix + name + ": not a quantity: '" + q + "' (use e.g. 256Mi, 1Gi, 100m)");
                }
            });
        }
    }

    private static boolean parses(Quantity q) {
        try {
            return amount(q).signum() >= 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static BigDecimal amount(Quantity q) {
        return Quantity.getAmountInBytes(q);
    }
}
