package io.loopcsi.operator;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;

/**
 * Leader election of the operator (QOSDK uses this bean in the prod profile): one Lease,
 * loopcsi-operator, in the operator's namespace, so that two operator pods (a rollout, a second
 * replica) never reconcile the same pools at once. The lease rules are in the operator's
 * generated RBAC (it holds leases for the pools' sidecars anyway).
 */
public class LeaderElection {

    public static final String LEASE = "loopcsi-operator";

    @Produces
    @Dependent
    LeaderElectionConfiguration leaderElection() {
        return new LeaderElectionConfiguration(LEASE, OperatorSettings.namespace());
    }
}
