package io.loopcsi.operator;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.Operator;
import io.loopcsi.csi.DriverConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * Starts the Java Operator SDK only in the operator role. QOSDK's own start is switched off at
 * build time (quarkus.operator-sdk.start-operator=false) because the same build also runs
 * standalone, which must need no cluster and no kubeconfig.
 */
@Singleton
public class OperatorRole {

    private static final Logger LOG = Logger.getLogger(OperatorRole.class);
    private volatile Operator started;

    void onStart(@Observes StartupEvent ev, DriverConfig config, OperatorConfig operatorConfig, Instance<Operator> operator) {
        if (!config.role().equals("operator")) {
            return;
        }
        // --namespace arrives as loopcsi.operator.namespace: the injected mapping makes it a known property
        operatorConfig.namespace().ifPresent(ns -> System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, ns));
        LOG.infof("loopcsi operator: reconciling StoragePools; pool components go to namespace %s", OperatorSettings.namespace());
        Operator op = operator.get();
        op.start();
        started = op;
    }

    void onStop(@Observes ShutdownEvent ev) {
        Operator op = started;
        if (op != null) {
            op.stop();
        }
    }
}
