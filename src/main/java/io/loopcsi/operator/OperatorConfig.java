package io.loopcsi.operator;

import java.util.Optional;

import io.smallrye.config.ConfigMapping;

/**
 * Declares the operator's own settings to the configuration system, so that
 * {@code loopcsi.operator.namespace} (what {@code --namespace} sets) maps to a root: without a
 * mapping SmallRye Config refuses an unknown property under the {@code loopcsi} prefix at start
 * (SRCFG00050). {@link OperatorSettings} reads it (JOSDK makes the dependents, not CDI).
 */
@ConfigMapping(prefix = "loopcsi.operator")
public interface OperatorConfig {

    /** Namespace of the pools' controller and node components. */
    Optional<String> namespace();
}
