package io.loopcsi.controller;

import java.util.Map;
import java.util.TreeMap;

import io.loopcsi.engine.MutableParameters;

/**
 * LoopVolume spec.mutableParameters as the controller writes them: the whole set wanted (what
 * the volume had, with a ControllerModifyVolume's keys replaced), in key order, so that two
 * calls wanting the same thing write the same spec (no new generation for the node).
 */
final class MutableSpec {

    private MutableSpec() {
    }

    /** A spec or status map as a sorted copy; null is empty. */
    static Map<String, String> of(Map<String, String> m) {
        return m == null ? new TreeMap<>() : new TreeMap<>(m);
    }

    /** What the spec must say after changes (already checked by MutableParameters.parse). */
    static Map<String, String> next(Map<String, String> wanted, MutableParameters changes) {
        return new TreeMap<>(new MutableParameters(of(wanted)).with(changes).given());
    }
}
