package io.loopcsi.operator.desired;

/**
 * The optional Kubernetes APIs through which a pool's sidecars reach the driver's ModifyVolume and
 * volume group snapshots, in the versions the current sidecars (csi-provisioner v5.3, csi-resizer
 * v1.14, csi-snapshotter v8.3) use. Their feature gates are turned on only where these are served:
 * csi-snapshotter with CSIVolumeGroupSnapshot on but no group snapshot CRDs stops serving ordinary
 * snapshots as well.
 *
 * @param volumeAttributesClasses storage.k8s.io/v1beta1 serves volumeattributesclasses (Kubernetes 1.31+ with the beta API on)
 * @param volumeGroupSnapshots    groupsnapshot.storage.k8s.io/v1beta1 serves volumegroupsnapshotcontents (external-snapshotter's CRDs, v8.2+)
 */
public record VolumeApis(boolean volumeAttributesClasses, boolean volumeGroupSnapshots) {

    /** Neither served. */
    public static final VolumeApis NONE = new VolumeApis(false, false);
}
