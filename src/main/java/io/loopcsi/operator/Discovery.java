package io.loopcsi.operator;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.operator.desired.ClusterInfo;

/** Asks the API server (once per server) what it serves, for {@link ClusterInfo}. */
public final class Discovery {

    private static final Logger LOG = Logger.getLogger(Discovery.class);
    private static final Map<String, ClusterInfo> CACHE = new ConcurrentHashMap<>();

    private Discovery() {
    }

    public static ClusterInfo clusterInfo(KubernetesClient client) {
        return CACHE.computeIfAbsent(String.valueOf(client.getMasterUrl()), k -> discover(client));
    }

    static ClusterInfo discover(KubernetesClient client) {
        boolean capacity = false;
        for (String v : List.of("storage.k8s.io/v1", "storage.k8s.io/v1beta1", "storage.k8s.io/v1alpha1")) {
            capacity |= serves(client, v, "csistoragecapacities");
        }
        int minor = minor(client.getKubernetesVersion().getMinor());
        ClusterInfo info = new ClusterInfo(capacity, minor >= 20, minor >= 22, minor,
                serves(client, "security.openshift.io/v1", "securitycontextconstraints"));
        LOG.infof("API server %s.%s: %s", client.getKubernetesVersion().getMajor(), client.getKubernetesVersion().getMinor(), info);
        return info;
    }

    static int minor(String minor) {
        String digits = minor == null ? "" : minor.replaceAll("[^0-9].*$", "");
        return digits.isEmpty() ? Integer.MAX_VALUE : Integer.parseInt(digits);
    }

    /** Whether the server serves a resource in a group version (a group it does not serve counts as not). */
    static boolean serves(KubernetesClient client, String groupVersion, String resource) {
        try {
            APIResourceList list = client.getApiResources(groupVersion);
            return list != null && list.getResources().stream().anyMatch(r -> r.getName().equals(resource));
        } catch (KubernetesClientException e) {
            return false;
        }
    }
}
