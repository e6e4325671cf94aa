package io.loopcsi.operator;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.operator.desired.VolumeAttributesClasses;
import io.loopcsi.operator.desired.VolumeGroupSnapshotClassSpec;

/**
 * The newest version in which the server serves a kind of class the pool makes where its API exists
 * (VolumeGroupSnapshotClass: external-snapshotter's CRDs; VolumeAttributesClass: Kubernetes 1.31+
 * with the beta API on, 1.34+), or none: nothing to write then, and no error. As
 * {@link SnapshotApiDiscovery}: asked at every reconcile until the newest version is seen (CRDs
 * installed or upgraded later are picked up), then remembered for the server until {@link #forget}.
 */
public final class ClassApiDiscovery {

    public static final ClassApiDiscovery GROUP_SNAPSHOT_CLASSES = new ClassApiDiscovery(VolumeGroupSnapshotClassSpec.GROUP,
            VolumeGroupSnapshotClassSpec.KIND, VolumeGroupSnapshotClassSpec.PLURAL, VolumeGroupSnapshotClassSpec.VERSIONS);
    public static final ClassApiDiscovery VOLUME_ATTRIBUTES_CLASSES = new ClassApiDiscovery(VolumeAttributesClasses.GROUP,
            VolumeAttributesClasses.KIND, VolumeAttributesClasses.PLURAL, VolumeAttributesClasses.VERSIONS);

    private static final Logger LOG = Logger.getLogger(ClassApiDiscovery.class);
    private final String group;
    private final String kind;
    private final String plural;
    private final List<String> newestFirst;
    private final Map<String, String> seen = new ConcurrentHashMap<>();

    ClassApiDiscovery(String group, String kind, String plural, List<String> newestFirst) {
        this.group = group;
        this.kind = kind;
        this.plural = plural;
        this.newestFirst = List.copyOf(newestFirst);
    }

    public Optional<String> servedVersion(KubernetesClient client) {
        String server = String.valueOf(client.getMasterUrl());
        String newest = newestFirst.get(0);
        if (newest.equals(seen.get(server))) {
            return Optional.of(newest);
        }
        String now = newestFirst.stream().filter(v -> Discovery.serves(client, group + "/" + v, plural)).findFirst().orElse(null);
        String before = now == null ? seen.remove(server) : seen.put(server, now);
        if (now != null && !now.equals(before)) {
            LOG.infof("API server %s serves %s/%s %s: pools get theirs", server, group, now, plural);
        }
        return Optional.ofNullable(now);
    }

    /** The API went away (an apply found no resource): ask again next time. */
    public void forget(KubernetesClient client) {
        seen.remove(String.valueOf(client.getMasterUrl()));
    }

    public String kind() {
        return kind;
    }

    /** The cluster-scoped resource in a version. */
    public ResourceDefinitionContext context(String version) {
        return new ResourceDefinitionContext.Builder().withGroup(group).withVersion(version).withKind(kind).withPlural(plural)
                .withNamespaced(false).build();
    }
}
