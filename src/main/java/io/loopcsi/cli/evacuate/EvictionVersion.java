package io.loopcsi.cli.evacuate;

import java.util.List;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Which Eviction the API server is sent for --evict. fabric8's {@code pods().evict()} (7.3.1) always
 * posts a policy/v1beta1 Eviction; policy/v1beta1 is deprecated since 1.22, while 1.20 and 1.21 know
 * no policy/v1 Eviction. So the version is the one the server's own discovery gives the
 * {@code pods/eviction} subresource of core v1 (policy/v1 from 1.22, policy/v1beta1 before): the check
 * kubectl drain makes (staging/src/k8s.io/kubectl/pkg/drain/drain.go, CheckEvictionSupport). Serving
 * policy/v1 at all is not enough: 1.21 serves it for PodDisruptionBudget but has no v1 Eviction.
 *
 * <p>
 * What the server requires of the body (pkg/registry/core/pod/storage/eviction.go, EvictionREST.Create):
 * metadata.name equal to the pod's name in the URL (else 400 "name in URL does not match name in
 * Eviction object"); deleteOptions may be empty. It answers 429 while a PodDisruptionBudget forbids
 * the eviction (fabric8 turns that into {@code false}) and 500 when more than one budget selects the pod.
 */
public enum EvictionVersion {
    V1("policy/v1"), V1BETA1("policy/v1beta1");

    static final String SUBRESOURCE = "pods/eviction";

    private final String apiVersion;

    EvictionVersion(String apiVersion) {
        this.apiVersion = apiVersion;
    }

    public String apiVersion() {
        return apiVersion;
    }

    /**
     * The version for a server whose core v1 resources are these: policy/v1 iff {@code pods/eviction}
     * is advertised with group policy and version v1; else policy/v1beta1, which every server with the
     * subresource accepts (a server older than 1.8 gives the subresource no version).
     */
    public static EvictionVersion of(List<APIResource> coreV1) {
        for (APIResource r : coreV1) {
            if (SUBRESOURCE.equals(r.getName()) && "Eviction".equals(r.getKind())) {
                return "policy".equals(r.getGroup()) && "v1".equals(r.getVersion()) ? V1 : V1BETA1;
            }
        }
        return V1BETA1;
    }

    /** Asks the server's discovery (GET /api/v1) once. */
    public static EvictionVersion of(KubernetesClient client) {
        var list = client.getApiResources("v1");
        return of(list == null || list.getResources() == null ? List.of() : list.getResources());
    }

    /**
     * Evicts one pod with this version's Eviction; false while a PodDisruptionBudget forbids it (429);
     * other refusals are thrown as fabric8 reports them.
     */
    public boolean evict(KubernetesClient client, String namespace, String pod) {
        var p = client.pods().inNamespace(namespace).withName(pod);
        if (this == V1BETA1) {
            return p.evict();
        }
        return p.evict(v1Body(namespace, pod));
    }

    /** The policy/v1 Eviction of one pod: its name must be the pod's (the URL's). */
    static Eviction v1Body(String namespace, String pod) {
        return new EvictionBuilder()
                .withNewMetadata().withName(pod).withNamespace(namespace).endMetadata()
                .withDeleteOptions(new DeleteOptions())
                .build();
    }
}
