package io.loopcsi.operator;

/**
 * Where the operator puts the namespaced objects of every pool (its own namespace). Read from
 * the system property loopcsi.operator.namespace, else the environment (LOOPCSI_NAMESPACE, set
 * from the pod's namespace in kubernetes/), else loopcsi-system. Plain lookups, no CDI: JOSDK
 * instantiates the dependents itself.
 */
public final class OperatorSettings {

    public static final String NAMESPACE_PROPERTY = "loopcsi.operator.namespace";
    public static final String DEFAULT_NAMESPACE = "loopcsi-system";

    private OperatorSettings() {
    }

    public static String namespace() {
        String ns = System.getProperty(NAMESPACE_PROPERTY);
        if (ns == null || ns.isBlank()) {
            ns = System.getenv("LOOPCSI_NAMESPACE");
        }
        return ns == null || ns.isBlank() ? DEFAULT_NAMESPACE : ns;
    }
}
