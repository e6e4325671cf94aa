package io.loopcsi.operator;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.UUID;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
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
 *
 * <p>A graceful stop releases the Lease ({@link #stopAndRelease}): JOSDK 5.1 builds fabric8's
 * LeaderElectionConfig with releaseOnCancel=false and only cancels its elector on stop, so the
 * Lease kept naming the stopped process and the successor waited the whole lease duration (30 s).
 * Released as client-go releases (holder cleared, duration 1 s), a candidate takes it at its next
 * try (fabric8 LeaderElector.canBecomeLeader: an empty holder may be taken at once), within
 * {@link #RETRY} plus fabric8's jitter (x1.2): at most 4.4 s.
 */
public class LeaderElection {

    public static final String LEASE = "loopcsi-operator";
    /** How often a candidate tries to take the Lease and the leader renews it (client-go's default). */
    public static final Duration RETRY = Duration.ofSeconds(2);
    private static final Logger LOG = Logger.getLogger(LeaderElection.class);

    @Produces
    @Dependent
    LeaderElectionConfiguration leaderElection(OperatorRole role) {
        return configuration(role.identity(), new LeaderCallbacks(() -> {
        }, role::leaseEnded, leader -> {
        }));
    }

    /**
     * The operator's election under {@code identity}, which must be unique per process (two
     * processes on one host would otherwise both believe they hold the Lease).
     */
    public static LeaderElectionConfiguration configuration(String identity, LeaderCallbacks callbacks) {
        return LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(LEASE)
                .withLeaseNamespace(OperatorSettings.namespace())
                .withIdentity(identity)
                // Renewals may fail for 25 s before the lease counts as lost (default 10 s): one
                // request that hangs for the client's 10 s timeout, seen through a slow service
                // route, no longer ends the leadership and restarts the operator. A dead leader's
                // pools wait at most 30 s for the next one; a stopped one's, a few seconds (released).
                .withLeaseDuration(Duration.ofSeconds(30))
                .withRenewDeadline(Duration.ofSeconds(25))
                .withRetryPeriod(RETRY)
                .withExitOnStopLeading(false)
                .withLeaderCallbacks(callbacks)
                .build();
    }

    /** The pod name (HOSTNAME in a pod, else the host's name) and a random part, as client-go makes it. */
    public static String newIdentity() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                host = "loopcsi-operator";
            }
        }
        return host + "_" + UUID.randomUUID();
    }

    /**
     * Stops the operator, then releases the Lease if it still names {@code identity}: after the
     * stop, so that no reconcile of this process overlaps the successor's. The operator closes its
     * client when it stops, so the release goes through a client of the same configuration.
     */
    public static void stopAndRelease(Operator op, String identity) {
        KubernetesClient client = null;
        try {
            client = new KubernetesClientBuilder().withConfig(op.getKubernetesClient().getConfiguration()).build();
        } catch (RuntimeException e) {
            LOG.debugf("no client to release the lease with: %s", e.getMessage());
        }
        op.stop();
        if (client != null) {
            try (KubernetesClient c = client) {
                release(c, OperatorSettings.namespace(), identity);
            }
        }
    }

    /** Clears the Lease's holder if it is {@code identity}; false when it names another (or is gone). */
    public static boolean release(KubernetesClient client, String namespace, String identity) {
        try {
            Lease lease = client.leases().inNamespace(namespace).withName(LEASE).get();
            if (lease == null || lease.getSpec() == null || !identity.equals(lease.getSpec().getHolderIdentity())) {
                return false;
            }
            ZonedDateTime now = ZonedDateTime.now();
            lease.getSpec().setHolderIdentity(null);
            lease.getSpec().setLeaseDurationSeconds(1);
            lease.getSpec().setAcquireTime(now);
            lease.getSpec().setRenewTime(now);
            client.resource(lease).update(); // carries the resourceVersion read: a successor's write in between wins
            LOG.info("leader-election lease released");
            return true;
        } catch (KubernetesClientException e) {
            LOG.warnf("could not release the leader-election lease (%s): a successor waits for it to expire", e.getMessage());
            return false;
        }
    }
}
