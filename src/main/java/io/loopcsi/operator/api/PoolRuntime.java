package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonProperty;

/** spec.runtime: which build of loopcsi the pool's controller and node components run. */
public enum PoolRuntime {
    @JsonProperty("native")
    NATIVE,
    @JsonProperty("jvm")
    JVM
}
