package io.loopcsi.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.loopcsi.engine.MutableParameters;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's VolumeAttributesClasses: one per value of the mutable parameter {@code provisioning}
 * ({@link MutableParameters}: thin, thick), so that a claim is switched between sparse and fully
 * allocated images by naming {@code <pool>-thin} or {@code <pool>-thick} in
 * spec.volumeAttributesClassName (csi-resizer calls ControllerModifyVolume, csi-provisioner passes the
 * parameters at CreateVolume). directIO, the other mutable parameter, gets no class: its default (auto)
 * suits nearly every volume, and an administrator who wants one writes it.
 *
 * <p>A built-in kind (kubernetes staging/src/k8s.io/api/storage/v1/types.go: driverName, required and
 * immutable; parameters, immutable, at least one; no spec), served as storage.k8s.io/v1beta1 from 1.31
 * (with the beta API on) and v1 from 1.34; built as a generic resource in the version the server serves.
 */
public final class VolumeAttributesClasses {

    public static final String GROUP = "storage.k8s.io";
    public static final String KIND = "VolumeAttributesClass";
    public static final String PLURAL = "volumeattributesclasses";
    /** Newest first. */
    public static final List<String> VERSIONS = List.of("v1", "v1beta1");
    /** The values of {@link MutableParameters#PROVISIONING}, each a class {@code <pool>-<value>}. */
    public static final List<String> PROVISIONING = List.of("thin", "thick");

    private VolumeAttributesClasses() {
    }

    /** @param version a served version of storage.k8s.io volumeattributesclasses, one of {@link #VERSIONS} */
    public static List<GenericKubernetesResource> desired(StoragePool pool, String version) {
        return PROVISIONING.stream().map(p -> {
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("driverName", pool.driverName());
            fields.put("parameters", Map.of(MutableParameters.PROVISIONING, p));
            return new GenericKubernetesResourceBuilder()
                    .withApiVersion(GROUP + "/" + version).withKind(KIND)
                    .withNewMetadata().withName(pool.getMetadata().getName() + "-" + p).withLabels(PoolNames.labels(pool)).endMetadata()
                    .withAdditionalProperties(fields)
                    .build();
        }).toList();
    }
}
