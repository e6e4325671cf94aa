package io.loopcsi.roles;

import java.util.List;

import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.loopcsi.csi.CallInterceptors;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.metrics.CommandMetrics;
import io.loopcsi.metrics.CsiCallMetrics;
import io.loopcsi.metrics.TransferMetrics;
import io.loopcsi.transfer.TransferObserver;

/**
 * Whether the engine's commands and the CSI calls are measured: only where metrics are served.
 * Elsewhere (standalone without --metrics-address, node and controller without --http-address) no
 * meter is made, so no Micrometer registry is asked for by our code.
 */
public class MetricsWiring {

    @Produces
    @Singleton
    CommandRunner.Observer commands(RoleWiring.Served served, Instance<CommandMetrics> metrics) {
        return served.metrics() ? metrics.get() : CommandRunner.NONE;
    }

    @Produces
    @Singleton
    TransferObserver transfers(RoleWiring.Served served, Instance<TransferMetrics> metrics) {
        return served.metrics() ? metrics.get() : TransferObserver.NONE;
    }

    @Produces
    @Singleton
    CallInterceptors calls(RoleWiring.Served served, Instance<CsiCallMetrics> metrics) {
        return new CallInterceptors(served.metrics() ? List.of(metrics.get()) : List.of());
    }
}
