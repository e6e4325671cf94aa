package io.loopcsi.operator;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import io.javaoperatorsdk.operator.Operator;

/**
 * Readiness of the operator role: JOSDK's Operator started and every event source of every
 * controller healthy (what QOSDK's own OperatorHealthCheck reports). QOSDK's check is excluded
 * (application.properties) because it reports DOWN in every process whose Operator was never
 * started, which are the controller role's pods (their readiness is /q/health/ready): in the
 * other roles this check has nothing to report and says UP.
 */
@Readiness
@ApplicationScoped
public class OperatorReadiness implements HealthCheck {

    static final String NAME = "loopcsi operator";

    private final OperatorRole role;

    OperatorReadiness(OperatorRole role) {
        this.role = role;
    }

    @Override
    public HealthCheckResponse call() {
        if (!role.isOperatorRole()) {
            return HealthCheckResponse.named(NAME).up().withData("role", "not the operator role").build();
        }
        Operator op = role.operator();
        HealthCheckResponseBuilder b = HealthCheckResponse.named(NAME);
        if (op == null || !op.getRuntimeInfo().isStarted()) {
            return b.down().withData("operator", "not started").build();
        }
        boolean healthy = true;
        for (var controller : op.getRuntimeInfo().getRegisteredControllers()) {
            var unhealthy = controller.getControllerHealthInfo().unhealthyEventSources();
            String name = controller.getConfiguration().getName();
            if (unhealthy.isEmpty()) {
                b.withData(name, "OK");
            } else {
                healthy = false;
                b.withData(name, "unhealthy event sources: " + String.join(", ", unhealthy.keySet()));
            }
        }
        return b.status(healthy).build();
    }
}
