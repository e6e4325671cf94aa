package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.MutableParameters;

class VolumeAttributesClassesTest {

    @Test
    void aThinAndAThickClassOfThePoolsDriver() {
        var all = VolumeAttributesClasses.desired(Pools.minimal("p1"), "v1");
        assertEquals(List.of("p1-thin", "p1-thick"), all.stream().map(c -> c.getMetadata().getName()).toList());
        for (var c : all) {
            assertEquals("storage.k8s.io/v1", c.getApiVersion());
            assertEquals("VolumeAttributesClass", c.getKind());
            assertNull(c.getMetadata().getNamespace(), "cluster-scoped");
            // storage/v1 types.go: driverName and parameters at the top level, no spec
            assertEquals("p1.loopcsi.io", c.getAdditionalProperties().get("driverName"));
            assertFalse(c.getAdditionalProperties().containsKey("spec"));
            assertEquals("p1", c.getMetadata().getLabels().get(PoolNames.POOL), "found again by the pool label");
        }
        assertEquals(Map.of("provisioning", "thin"), all.get(0).getAdditionalProperties().get("parameters"));
        assertEquals(Map.of("provisioning", "thick"), all.get(1).getAdditionalProperties().get("parameters"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void theDriverAcceptsTheirParametersAtModifyVolume() {
        // what csi-resizer sends as ControllerModifyVolume's mutable_parameters: the class's parameters
        for (var c : VolumeAttributesClasses.desired(Pools.minimal("p1"), "v1beta1")) {
            assertEquals("storage.k8s.io/v1beta1", c.getApiVersion());
            var parsed = MutableParameters.parse("mutable_parameters", (Map<String, String>) c.getAdditionalProperties().get("parameters"));
            assertEquals(c.getMetadata().getName().endsWith("-thick"), parsed.thick(), c.getMetadata().getName());
        }
    }
}
