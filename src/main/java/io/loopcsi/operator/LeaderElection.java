package io.loopcsi.operator;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;

/**
 * Leader election of the operator (QOSDK uses this bean in the prod profile): one Lease,
 * loopcsi-operator, in the operator's namespace, so that two operator pods (a rollout, a second
 * replica) never reconcile the same pools at once. The lease rules are in the operator's
 * generated RBAC (it holds leases for the pools' sidecars anyway).
 *
 * <p>JOSDK's own reaction to losing the lease is a {@code System.exit(1)} from the thread that
 * noticed. Stopping the operator on SIGTERM also ends the lease, and that exit then ran inside
 * Quarkus' shutdown, where {@code System.exit} blocks forever (the JVM is already exiting and
 * waits for the shutdown hook, which waits for that very thread): the process hung until
 * SIGKILL. So JOSDK is told not to exit, and {@link OperatorRole} decides: a lease lost while
 * running still ends the process (another replica may be reconciling now), a lease ended by
 * our own shutdown does nothing.
 */
public class LeaderElection {

    public static final String LEASE = "loopcsi-operator";

    @Produces
    @Dependent
    LeaderElectionConfiguration leaderElection(OperatorRole role) {
        return LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(LEASE)
                .withLeaseNamespace(OperatorSettings.namespace())
                // Renewals may fail for 25 s before the lease counts as lost (default 10 s): one
                // request that hangs for the client's 10 s timeout, seen through a slow service
                // route, no longer ends the leadership and restarts the operator. A dead leader's
                // pools wait at most 30 s for the next one.
                .withLeaseDuration(java.time.Duration.ofSeconds(30))
                .withRenewDeadline(java.time.Duration.ofSeconds(25))
                .withRetryPeriod(java.time.Duration.ofSeconds(5))
                .withExitOnStopLeading(false)
                .withLeaderCallbacks(new LeaderCallbacks(() -> {
                }, role::leaseEnded, leader -> {
                }))
                .build();
    }
}
