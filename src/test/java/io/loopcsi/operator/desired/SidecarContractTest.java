package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.loopcsi.operator.desired.SidecarReleases.Release;

/**
 * The controller Deployment and RBAC against what each sidecar release the operator deploys says
 * of itself (../shared/data/sidecars: README, upstream RBAC, -h output). A flag a release does not
 * know makes it exit at start, a missing env var too, a missing rule makes its informers fail: the
 * crash-loop of issue 21 (csi-provisioner v2.1.2 without POD_NAMESPACE) is the second case.
 */
class SidecarContractTest {

    /**
     * Flags a release has that its README's option list leaves out, each read in that release's
     * source: --default-fstype (external-provisioner cmd/csi-provisioner/csi-provisioner.go,
     * "default-fstype"), --extra-create-metadata of csi-snapshotter (external-snapshotter
     * cmd/csi-snapshotter/main.go, "extra-create-metadata"), --feature-gates of csi-resizer
     * (external-resizer cmd/csi-resizer/main.go, utilfeature.DefaultMutableFeatureGate flag, v1.10+).
     */
    static final Map<String, Set<String>> UNDOCUMENTED = Map.of(
            "csi-provisioner", Set.of("--default-fstype"),
            "csi-snapshotter", Set.of("--extra-create-metadata"),
            "csi-resizer", Set.of("--feature-gates"));

    @Test
    void everyFlagTheOperatorPassesIsOneTheDeployedReleaseHas() {
        List<String> unknown = new ArrayList<>();
        SidecarReleases.BY_SERVER.forEach((minor, releases) -> {
            for (Container c : sidecars(minor, VolumeApis.NONE)) {
                Release r = release(releases, c);
                Set<String> known = new TreeSet<>(SidecarReleases.hasHelp(r) ? SidecarReleases.helpFlags(r) : r.readmeFlags());
                if (!SidecarReleases.hasHelp(r)) {
                    known.addAll(UNDOCUMENTED.getOrDefault(r.container(), Set.of()));
                }
                for (String arg : c.getArgs()) {
                    String flag = arg.split("=", 2)[0];
                    if (!known.contains(flag)) {
                        unknown.add(r.image() + " " + flag);
                    }
                }
            }
        });
        assertEquals(List.of(), unknown, "flags a sidecar release does not have (it would exit at start)");
    }

    @Test
    void theOldestProvisionerSeesThePodNamespaceUnderTheNameItReads() {
        // v2.1.2's -h (shared/data/sidecars/help): "starting from the pod identified by the POD_NAME and POD_NAMESPACE
        // environment variables"; it exits with "need POD_NAMESPACE/POD_NAME env variables" under --enable-capacity.
        assertTrue(SidecarReleases.helpFlags(SidecarReleases.PROVISIONER_2_1_2).contains("--capacity-ownerref-level"));
        Container prov = sidecars(20, VolumeApis.NONE).stream().filter(c -> c.getName().equals("csi-provisioner")).findFirst().orElseThrow();
        assertTrue(prov.getArgs().contains("--enable-capacity"));
        assertEquals("metadata.namespace", fieldRef(prov, "POD_NAMESPACE"));
        assertEquals("metadata.name", fieldRef(prov, "POD_NAME"));
        for (int minor : SidecarReleases.BY_SERVER.keySet()) {
            for (Container c : sidecars(minor, VolumeApis.NONE)) {
                // v3 and later read NAMESPACE; --leader-election-namespace=$(NAMESPACE) needs it in every sidecar
                assertEquals("metadata.namespace", fieldRef(c, "NAMESPACE"), c.getImage());
                assertEquals("metadata.namespace", fieldRef(c, "POD_NAMESPACE"), c.getImage());
                assertEquals("metadata.name", fieldRef(c, "POD_NAME"), c.getImage());
            }
        }
    }

    @Test
    void theControllerMayDoEverythingEachDeployedReleasesOwnRbacGrantsIt() {
        List<String> missing = new ArrayList<>();
        SidecarReleases.BY_SERVER.values().forEach(releases -> releases.forEach(r -> {
            SidecarReleases.Rbac rbac = r.rbac();
            for (JsonNode rule : rbac.clusterRules()) {
                missing.addAll(notGranted(r, rule, CsiRbac.CONTROLLER_CLUSTER_RULES));
            }
            List<PolicyRule> inNamespace = new ArrayList<>(CsiRbac.CONTROLLER_CLUSTER_RULES);
            inNamespace.addAll(CsiRbac.CONTROLLER_NAMESPACE_RULES);
            for (JsonNode rule : rbac.namespaceRules()) {
                missing.addAll(notGranted(r, rule, inNamespace));
            }
        }));
        assertEquals(List.of(), missing, "rules a deployed release's own RBAC has and the pool's controller lacks");
    }

    /**
     * Upstream rules the controller does without, each for a reason: "endpoints" is the lock of the
     * leader election that csi-lib-utils replaced with Leases before these releases (their
     * --leader-election uses coordination.k8s.io leases; the old manifests keep the rule for
     * clusters upgraded from endpoint locks).
     */
    static final Set<String> NOT_NEEDED = Set.of("/endpoints");

    private static List<String> notGranted(Release r, JsonNode rule, List<PolicyRule> ours) {
        List<String> out = new ArrayList<>();
        for (JsonNode group : rule.path("apiGroups")) {
            for (JsonNode resource : rule.path("resources")) {
                if (NOT_NEEDED.contains(group.asText() + "/" + resource.asText())) {
                    continue;
                }
                for (JsonNode verb : rule.path("verbs")) {
                    boolean granted = ours.stream().anyMatch(p -> p.getApiGroups().contains(group.asText())
                            && p.getResources().contains(resource.asText()) && p.getVerbs().contains(verb.asText()));
                    if (!granted) {
                        out.add(r.image() + ": " + group.asText() + "/" + resource.asText() + " " + verb.asText());
                    }
                }
            }
        }
        return out;
    }

    static List<Container> sidecars(int serverMinor, VolumeApis apis) {
        return ControllerDeployment.desired(Pools.minimal("p1"), "ns", new ClusterInfo(true, true, serverMinor >= 22, serverMinor), apis)
                .getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> !c.getName().equals("loopcsi")).toList();
    }

    private static Release release(List<Release> releases, Container c) {
        Release r = releases.stream().filter(x -> x.container().equals(c.getName())).findFirst().orElseThrow();
        assertEquals(r.image(), c.getImage(), "the release this test reads is the one deployed");
        return r;
    }

    private static String fieldRef(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst().map(EnvVar::getValueFrom)
                .map(v -> v.getFieldRef().getFieldPath()).orElse(null);
    }
}
