package io.loopcsi.operator;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.operator.desired.VolumeApis;

/**
 * Asks the API server for {@link VolumeApis}. Unlike {@link Discovery} (fixed for a server's
 * version) these come and go with CRDs and API flags, so an API not served yet is asked again at
 * every reconcile (a cluster that installs the group snapshot CRDs later gets the feature gate at
 * the next reconcile); once seen it is remembered for the server.
 */
public final class VolumeApiDiscovery {

    private static final Logger LOG = Logger.getLogger(VolumeApiDiscovery.class);
    private static final Map<String, VolumeApis> SEEN = new ConcurrentHashMap<>();

    private VolumeApiDiscovery() {
    }

    public static VolumeApis volumeApis(KubernetesClient client) {
        String server = String.valueOf(client.getMasterUrl());
        VolumeApis known = SEEN.getOrDefault(server, VolumeApis.NONE);
        if (known.equals(VolumeApis.ALL)) {
            return known;
        }
        VolumeApis now = known.or(new VolumeApis(
                !known.vacV1beta1() && Discovery.serves(client, "storage.k8s.io/v1beta1", "volumeattributesclasses"),
                !known.vacV1() && Discovery.serves(client, "storage.k8s.io/v1", "volumeattributesclasses"),
                !known.groupSnapshotsV1beta1() && Discovery.serves(client, "groupsnapshot.storage.k8s.io/v1beta1", "volumegroupsnapshotcontents"),
                !known.groupSnapshotsV1() && Discovery.serves(client, "groupsnapshot.storage.k8s.io/v1", "volumegroupsnapshotcontents")));
        if (!now.equals(known)) {
            LOG.infof("API server %s serves %s: the pool controllers' sidecars get the matching feature gates", server, now);
            SEEN.put(server, now);
        }
        return now;
    }

    /**
     * Forgets what was seen on the client's server: the next call asks it anew. For a server whose
     * optional APIs were removed (the operator's own restart does the same); the tests, which share
     * one server and one process across test classes, use it to start from what the server serves.
     */
    public static void forget(KubernetesClient client) {
        SEEN.remove(String.valueOf(client.getMasterUrl()));
    }
}
