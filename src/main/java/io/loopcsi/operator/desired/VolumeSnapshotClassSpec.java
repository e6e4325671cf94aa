package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's VolumeSnapshotClass: its driver, deletionPolicy Delete (a VolumeSnapshot deleted
 * deletes its snapshot on the node, as a PVC of a Delete class does its volume), the default-class
 * annotation when asked. Built as a generic resource in the version the server serves: the
 * snapshot.storage.k8s.io CRDs are external-snapshotter's, optional, and v1beta1 and v1 have the
 * same fields (driver, deletionPolicy, parameters at the top level, no spec).
 */
public final class VolumeSnapshotClassSpec {

    public static final String GROUP = "snapshot.storage.k8s.io";
    public static final String KIND = "VolumeSnapshotClass";
    public static final String PLURAL = "volumesnapshotclasses";
    /** external-snapshotter's default-class annotation (a VolumeSnapshot without a class gets the driver's default). */
    public static final String DEFAULT_CLASS_ANNOTATION = "snapshot.storage.k8s.io/is-default-class";

    private VolumeSnapshotClassSpec() {
    }

    /** The class name: spec.snapshots.className, else {@code <pool>-snapshots}. */
    public static String name(StoragePool pool) {
        String n = pool.getSpec() == null || pool.getSpec().getSnapshots() == null ? null : pool.getSpec().getSnapshots().getClassName();
        return n == null || n.isBlank() ? pool.getMetadata().getName() + "-snapshots" : n;
    }

    /** @param version the served version of snapshot.storage.k8s.io: v1 or v1beta1 */
    public static GenericKubernetesResource desired(StoragePool pool, String version) {
        Map<String, String> annotations = new LinkedHashMap<>();
        if (pool.getSpec() != null && pool.getSpec().getSnapshots() != null && pool.getSpec().getSnapshots().isDefaultClass()) {
            annotations.put(DEFAULT_CLASS_ANNOTATION, "true");
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("driver", pool.driverName());
        fields.put("deletionPolicy", "Delete");
        return new GenericKubernetesResourceBuilder()
                .withApiVersion(GROUP + "/" + version).withKind(KIND)
                .withNewMetadata().withName(name(pool)).withLabels(PoolNames.labels(pool)).withAnnotations(annotations).endMetadata()
                .withAdditionalProperties(fields)
                .build();
    }
}
