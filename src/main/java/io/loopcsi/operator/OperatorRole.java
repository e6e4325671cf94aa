package io.loopcsi.operator;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.Operator;
import io.quarkus.runtime.Quarkus;

/**
 * Starts the Java Operator SDK only in the operator role. QOSDK's own start is switched off at
 * build time (quarkus.operator-sdk.start-operator=false) because the same build also runs
 * standalone, which must need no cluster and no kubeconfig.
 */
@Singleton
public class OperatorRole {

    /** Exit status when the lease was lost while running (JOSDK's choice too). */
    public static final int LOST_LEASE_EXIT = 1;
    private static final Logger LOG = Logger.getLogger(OperatorRole.class);
    private volatile Operator started;
    private volatile boolean stopping;
    private volatile boolean operatorRole;
    /** This process' name in the leader-election Lease: unique per process. */
    private final String identity = LeaderElection.newIdentity();

    private final OperatorConfig operatorConfig;
    private final Instance<Operator> operator;

    OperatorRole(OperatorConfig operatorConfig, Instance<Operator> operator) {
        this.operatorConfig = operatorConfig;
        this.operator = operator;
    }

    /** Builds and starts JOSDK's Operator: roles.RoleWiring, in the operator role only. */
    public void start() {
        operatorRole = true;
        // --namespace arrives as loopcsi.operator.namespace: the injected mapping makes it a known property
        operatorConfig.namespace().ifPresent(ns -> System.setProperty(OperatorSettings.NAMESPACE_PROPERTY, ns));
        LOG.infof("loopcsi operator: reconciling StoragePools; pool components go to namespace %s", OperatorSettings.namespace());
        Operator op = operator.get();
        op.start();
        started = op;
    }

    /** Whether this process runs the operator role (set at start). */
    boolean isOperatorRole() {
        return operatorRole;
    }

    /** The started Operator, or null before (or without) its start. */
    Operator operator() {
        return started;
    }

    /** This process' identity in the leader-election Lease. */
    String identity() {
        return identity;
    }

    /** Stops reconciling, then hands the Lease over at once: a successor leads within seconds (roles.RoleWiring, at shutdown). */
    public void stop() {
        stopping = true;
        Operator op = started;
        if (op != null) {
            LeaderElection.stopAndRelease(op, identity);
        }
    }

    /**
     * The leader-election lease ended. During our own shutdown that is expected. Otherwise another
     * replica may hold it now: stop at once, through Quarkus' asynchronous exit (a synchronous
     * exit from this callback would wait on the shutdown it starts).
     */
    void leaseEnded() {
        if (stopping) {
            LOG.debug("leader-election lease released on shutdown");
            return;
        }
        LOG.error("lost the leader-election lease: exiting so that only the new leader reconciles");
        Quarkus.asyncExit(LOST_LEASE_EXIT);
    }
}
