package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's VolumeGroupSnapshotClass: its driver, deletionPolicy Delete (as its VolumeSnapshotClass),
 * no parameters (the driver's CreateVolumeGroupSnapshot takes none: GroupControllerService checks only
 * their size). The groupsnapshot.storage.k8s.io CRDs are external-snapshotter's and optional;
 * client/config/crd/groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml of v8.6.0 serves v1,
 * v1beta2 (stored) and v1beta1 (deprecated); v1beta2 came with Kubernetes 1.34's move of the API, releases
 * before it (v8.2 beta) serve v1beta1 only, and v1alpha1 (v7) gets no class (the pool's csi-snapshotter runs
 * group snapshots on v1beta1 and later only, {@link VolumeApis}). Every one has
 * driver, deletionPolicy (Delete|Retain) and parameters at the top level (no spec); in v1beta2 and v1 the
 * three are immutable (CEL self == oldSelf), which a class that never changes them meets.
 */
public final class VolumeGroupSnapshotClassSpec {

    public static final String GROUP = "groupsnapshot.storage.k8s.io";
    public static final String KIND = "VolumeGroupSnapshotClass";
    public static final String PLURAL = "volumegroupsnapshotclasses";
    /** The versions the class is written in, newest first: the newest the server serves is used. */
    public static final List<String> VERSIONS = List.of("v1", "v1beta2", "v1beta1");

    private VolumeGroupSnapshotClassSpec() {
    }

    /** {@code <pool>-group-snapshots}. */
    public static String name(StoragePool pool) {
        return pool.getMetadata().getName() + "-group-snapshots";
    }

    /** @param version a served version of groupsnapshot.storage.k8s.io, one of {@link #VERSIONS} */
    public static List<GenericKubernetesResource> desired(StoragePool pool, String version) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("driver", pool.driverName());
        fields.put("deletionPolicy", "Delete");
        return List.of(new GenericKubernetesResourceBuilder()
                .withApiVersion(GROUP + "/" + version).withKind(KIND)
                .withNewMetadata().withName(name(pool)).withLabels(PoolNames.labels(pool)).endMetadata()
                .withAdditionalProperties(fields)
                .build());
    }
}
