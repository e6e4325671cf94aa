package io.loopcsi.operator;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.operator.desired.VolumeSnapshotClassSpec;

/**
 * Which version of snapshot.storage.k8s.io the server serves VolumeSnapshotClasses in: v1 where
 * served (external-snapshotter v4+ CRDs), else v1beta1 (older CRDs), else none (no snapshot CRDs:
 * nothing to write). Like {@link VolumeApiDiscovery} the answer follows CRDs installed later: it is
 * asked at every reconcile until v1 is seen, then remembered for the server until {@link #forget}.
 */
public final class SnapshotApiDiscovery {

    public static final String V1 = "v1";
    public static final String V1BETA1 = "v1beta1";
    private static final Logger LOG = Logger.getLogger(SnapshotApiDiscovery.class);
    private static final Map<String, String> SEEN = new ConcurrentHashMap<>();

    private SnapshotApiDiscovery() {
    }

    public static Optional<String> servedVersion(KubernetesClient client) {
        String server = String.valueOf(client.getMasterUrl());
        if (V1.equals(SEEN.get(server))) {
            return Optional.of(V1);
        }
        String now = serves(client, V1) ? V1 : serves(client, V1BETA1) ? V1BETA1 : null;
        String before = now == null ? SEEN.remove(server) : SEEN.put(server, now);
        if (now != null && !now.equals(before)) {
            LOG.infof("API server %s serves %s/%s %s: pools get their VolumeSnapshotClass", server, VolumeSnapshotClassSpec.GROUP, now,
                    VolumeSnapshotClassSpec.PLURAL);
        }
        return Optional.ofNullable(now);
    }

    /** The API went away (an apply found no resource): ask again next time. */
    public static void forget(KubernetesClient client) {
        SEEN.remove(String.valueOf(client.getMasterUrl()));
    }

    private static boolean serves(KubernetesClient client, String version) {
        return Discovery.serves(client, VolumeSnapshotClassSpec.GROUP + "/" + version, VolumeSnapshotClassSpec.PLURAL);
    }
}
