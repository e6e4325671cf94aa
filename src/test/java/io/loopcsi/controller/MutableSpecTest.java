package io.loopcsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.MutableParameters;

/** What the controller writes into spec.mutableParameters for a ControllerModifyVolume. */
class MutableSpecTest {

    @Test
    void aModifyReplacesItsKeysAndKeepsTheOthersInKeyOrder() {
        Map<String, String> next = MutableSpec.next(Map.of("provisioning", "thick"),
                MutableParameters.parse("mutable_parameters", Map.of("directIO", "OFF")));
        assertEquals(Map.of("provisioning", "thick", "directIO", "off"), next);
        assertEquals(List.of("directIO", "provisioning"), List.copyOf(next.keySet()), "sorted: the same wish writes the same spec");
        assertEquals(Map.of("provisioning", "thin"), MutableSpec.next(Map.of("provisioning", "thick"),
                MutableParameters.parse("mutable_parameters", Map.of("provisioning", "thin"))));
        assertEquals(Map.of("provisioning", "thin"), MutableSpec.next(null, MutableParameters.parse("mutable_parameters",
                Map.of("provisioning", "thin"))), "a volume written before mutable parameters existed");
    }
}
