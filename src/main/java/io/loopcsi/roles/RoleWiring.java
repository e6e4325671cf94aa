package io.loopcsi.roles;

import java.util.ArrayDeque;
import java.util.Deque;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.loopcsi.controller.ControllerRole;
import io.loopcsi.csi.CsiServer;
import io.loopcsi.csi.DriverConfig;
import io.loopcsi.csi.ServingStarted;
import io.loopcsi.csi.StartupLog;
import io.loopcsi.csi.ThickAllocationCheck;
import io.loopcsi.metrics.PoolMetrics;
import io.loopcsi.node.NodeRole;
import io.loopcsi.operator.OperatorRole;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * What each role starts, in one place: nothing below this package observes StartupEvent. A part a
 * role does not start is never looked up, so its bean is never made and its classes (the
 * Kubernetes client and informers of the node and controller roles, JOSDK's Operator, the
 * Micrometer meters) are not loaded by the roles that do not use it.
 *
 * <pre>
 * standalone  recover the pool, CSI server, thick-allocation check; pool gauges with --metrics-address
 * node        the same (pool gauges with --http-address), then the node's informers, capacity, kubelet registration
 * controller  CSI server, then the controller's informers
 * operator    JOSDK's Operator (no CSI)
 * </pre>
 *
 * Stopping runs in the reverse order of starting.
 */
@Singleton
public class RoleWiring {

    private static final Logger LOG = Logger.getLogger(RoleWiring.class);

    /** What was started, to stop last-started first. */
    private final Deque<Stop> started = new ArrayDeque<>();

    private interface Stop {
        void stop() throws Exception;
    }

    void onStart(@Observes StartupEvent ev, DriverConfig config, Served served, Instance<CsiServer> csi, Instance<StartupLog> log,
            Instance<ThickAllocationCheck> thick, Instance<PoolMetrics> poolMetrics, Instance<NodeRole> node,
            Instance<ControllerRole> controller, Instance<OperatorRole> operator) throws Exception {
        switch (config.role()) {
            case "operator" -> {
                OperatorRole o = operator.get();
                o.start();
                started.push(o::stop);
            }
            case "controller" -> {
                startCsi(csi.get());
                controller.get().start();
            }
            default -> { // standalone, node: a pool directory on this machine
                if (config.endpoint().isEmpty()) {
                    return; // a test of the services alone, without the launcher: it serves nothing
                }
                log.get().recover(); // before anything is served: recovery removes what interrupted operations left
                startCsi(csi.get());
                ThickAllocationCheck t = thick.get();
                t.start();
                started.push(t::stop);
                if (served.metrics()) {
                    poolMetrics.get().register();
                }
                if (config.role().equals("node")) {
                    NodeRole n = node.get();
                    started.push(n::stop);
                    n.start();
                }
            }
        }
    }

    private void startCsi(CsiServer server) throws java.io.IOException {
        server.start();
        started.push(server::stop);
    }

    void onServing(@Observes ServingStarted ev, DriverConfig config, Instance<StartupLog> log) {
        if (config.role().equals("standalone") || config.role().equals("node")) {
            log.get().summarise(); // the other roles say what they serve as they start
        }
    }

    void onStop(@Observes ShutdownEvent ev) {
        while (!started.isEmpty()) {
            try {
                started.pop().stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                LOG.debugf("stopping: %s", e);
            }
        }
    }

    /** Whether this process serves metrics: its HTTP server listens (--metrics-address, --http-address; always in the operator role). */
    @Singleton
    static class Served {
        private final boolean metrics;

        Served(@ConfigProperty(name = "quarkus.http.host-enabled", defaultValue = "true") boolean http) {
            this.metrics = http;
        }

        boolean metrics() {
            return metrics;
        }
    }
}
