package io.loopcsi.node;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * The node pod's liveness (its one container probes its own /q/health/live): down when kubelet
 * refused the registration or the informers stopped, so that kubelet restarts the pod, which
 * registers again. Up in every other role.
 */
@Liveness
@ApplicationScoped
public class NodeHealth implements HealthCheck {

    private final NodeRole role;

    NodeHealth(NodeRole role) {
        this.role = role;
    }

    @Override
    public HealthCheckResponse call() {
        var problem = role.problem();
        return HealthCheckResponse.named("loopcsi-node").status(problem.isEmpty()).withData("problem", problem.orElse("none"))
                .withData("role", role.isNodeRole() ? "node" : "not the node role").build();
    }
}
