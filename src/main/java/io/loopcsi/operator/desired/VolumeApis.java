package io.loopcsi.operator.desired;

/**
 * The optional Kubernetes APIs through which a pool's sidecars reach the driver's ModifyVolume and
 * volume group snapshots, in each version a deployed sidecar set reads. Their feature gates are
 * turned on only where the version that set reads is served: csi-snapshotter with
 * CSIVolumeGroupSnapshot on but no group snapshot API stops serving ordinary snapshots as well.
 *
 * @param vacV1beta1            storage.k8s.io/v1beta1 serves volumeattributesclasses (1.31+ with the beta API on): csi-provisioner v5.3, csi-resizer v1.14
 * @param vacV1                 storage.k8s.io/v1 serves volumeattributesclasses (1.34+): csi-provisioner v6, csi-resizer v2
 * @param groupSnapshotsV1beta1 groupsnapshot.storage.k8s.io/v1beta1 serves volumegroupsnapshotcontents (external-snapshotter's CRDs v8.2+): csi-snapshotter v8.3
 * @param groupSnapshotsV1      groupsnapshot.storage.k8s.io/v1 serves them (CRDs of v8.6+): csi-snapshotter v8.6 (CHANGELOG-8.6, #1368)
 */
public record VolumeApis(boolean vacV1beta1, boolean vacV1, boolean groupSnapshotsV1beta1, boolean groupSnapshotsV1) {

    /** None served. */
    public static final VolumeApis NONE = new VolumeApis(false, false, false, false);

    /** Everything served. */
    public static final VolumeApis ALL = new VolumeApis(true, true, true, true);

    /** Every API seen in either. */
    public VolumeApis or(VolumeApis o) {
        return new VolumeApis(vacV1beta1 || o.vacV1beta1, vacV1 || o.vacV1, groupSnapshotsV1beta1 || o.groupSnapshotsV1beta1,
                groupSnapshotsV1 || o.groupSnapshotsV1);
    }
}
