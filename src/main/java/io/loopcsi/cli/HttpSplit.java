package io.loopcsi.cli;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.loopcsi.csi.DriverConfig;
import io.vertx.ext.web.Router;

/**
 * In the CSI roles CSI is served only on the CSI endpoint (csi.CsiServer), and Quarkus' HTTP
 * server listens on TCP only with --http-address (controller, node) or --metrics-address
 * (standalone), for /q/ (health and metrics).
 * quarkus-grpc still registers the CSI services as routes of that server: a request on TCP for
 * anything but /q/ (a gRPC call among them) is answered 404 before any route sees it, so that no
 * CSI call is reachable over the network.
 */
@Singleton
public class HttpSplit {

    /** Before the gRPC routes (quarkus-grpc registers them at orders around -200). */
    static final int ORDER = -10_000;

    void routes(@Observes Router router, DriverConfig config) {
        if (config.role().equals("operator")) {
            return;
        }
        router.route().order(ORDER).handler(rc -> {
            if (!rc.normalizedPath().startsWith("/q/")) {
                rc.response().setStatusCode(404).end("only /q/ is served here; CSI is served on the CSI endpoint only\n");
                return;
            }
            rc.next();
        });
    }
}
