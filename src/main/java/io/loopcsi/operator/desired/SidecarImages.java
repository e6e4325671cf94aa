package io.loopcsi.operator.desired;

import java.util.List;

import io.loopcsi.operator.api.Images;

/**
 * The CSI sidecar images that fit the API server found. csi-provisioner writes CSIStorageCapacity
 * in the one API version it was built for: storage.k8s.io/v1alpha1 up to v2.1, v1beta1 from v2.2
 * (with v1 as well from v3.2), only v1 in v5; csi-provisioner v6 and csi-resizer v2 read
 * VolumeAttributesClass only in storage.k8s.io/v1 (1.34; CHANGELOG-6.0 and CHANGELOG-2.0 of
 * external-provisioner and external-resizer), so servers 1.24-1.33, which serve it as v1beta1,
 * keep the set before them. A pool on an older server gets older sidecars.
 * Only the defaults are replaced: an image the admin chose is used as it is; the image of any set
 * counts as a default, so a pool whose spec holds an earlier version's default (the CRD wrote it
 * there) follows the server too.
 *
 * <pre>
 * server        CSIStorageCapacity  csi-provisioner  csi-resizer  csi-snapshotter  VolumeAttributesClass  group snapshots
 * 1.20          v1alpha1            v2.1.2           v1.1.0       v4.0.0           -                      -
 * 1.21 - 1.23   v1beta1             v3.1.1           v1.4.0       v5.0.1           -                      -
 * 1.24 - 1.33   v1                  v5.3.0           v1.14.0      v8.3.0           v1beta1 (gate)         v1beta1 (gate)
 * 1.34 and on   v1                  v6.3.0           v2.2.1       v8.6.0           v1 (on by default)     v1 (gate)
 * </pre>
 * docs/sidecars.md gives each release's flags, env, RBAC and requests, with their sources.
 */
public final class SidecarImages {

    static final String REGISTRY = "registry.k8s.io/sig-storage/";

    public record Set(String provisioner, String resizer, String snapshotter) {
    }

    static final Set V1_20 = new Set(REGISTRY + "csi-provisioner:v2.1.2", REGISTRY + "csi-resizer:v1.1.0", REGISTRY + "csi-snapshotter:v4.0.0");
    static final Set V1_21 = new Set(REGISTRY + "csi-provisioner:v3.1.1", REGISTRY + "csi-resizer:v1.4.0", REGISTRY + "csi-snapshotter:v5.0.1");
    static final Set V1_24 = new Set(REGISTRY + "csi-provisioner:v5.3.0", REGISTRY + "csi-resizer:v1.14.0", REGISTRY + "csi-snapshotter:v8.3.0");
    static final Set CURRENT = new Set(Images.PROVISIONER, Images.RESIZER, Images.SNAPSHOTTER);
    static final List<Set> ALL = List.of(V1_20, V1_21, V1_24, CURRENT);

    private SidecarImages() {
    }

    public static Set forServer(int minor) {
        return minor <= 20 ? V1_20 : minor <= 23 ? V1_21 : minor <= 33 ? V1_24 : CURRENT;
    }

    /** The images a pool's controller runs: the spec's, with the defaults replaced by those that fit the server. */
    public static Set of(Images spec, ClusterInfo cluster) {
        Set fit = forServer(cluster.serverMinor());
        return new Set(pick(spec.getProvisioner(), ALL.stream().map(Set::provisioner).toList(), fit.provisioner()),
                pick(spec.getResizer(), ALL.stream().map(Set::resizer).toList(), fit.resizer()),
                pick(spec.getSnapshotter(), ALL.stream().map(Set::snapshotter).toList(), fit.snapshotter()));
    }

    private static String pick(String chosen, List<String> defaults, String fit) {
        return chosen == null || chosen.isBlank() || defaults.contains(chosen) ? fit : chosen;
    }
}
