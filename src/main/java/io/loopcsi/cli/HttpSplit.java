package io.loopcsi.cli;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.loopcsi.csi.DriverConfig;
import io.vertx.ext.web.Router;

/**
 * In the controller and node roles one HTTP server listens on the CSI socket and, with
 * --http-address, on TCP: CSI is served only on the socket, and TCP serves only /q/ (health and
 * metrics). A request on TCP for anything else (a gRPC call among them) is answered 404 before
 * any service sees it.
 */
@Singleton
public class HttpSplit {

    /** Before the gRPC routes (quarkus-grpc registers them at orders around -200). */
    static final int ORDER = -10_000;

    void routes(@Observes Router router, DriverConfig config) {
        if (!config.role().equals("controller") && !config.role().equals("node")) {
            return;
        }
        String other = config.role().equals("node") ? "/csi.v1.Controller/" : "/csi.v1.Node/";
        String otherMessage = config.role().equals("node")
                ? "the node role serves CSI Identity and Node; the Controller service is the controller role's"
                : "the controller role serves CSI Identity and Controller; the Node service is the node role's";
        router.route().order(ORDER).handler(rc -> {
            var local = rc.request().localAddress();
            if ((local == null || !local.isDomainSocket()) && !rc.normalizedPath().startsWith("/q/")) {
                rc.response().setStatusCode(404).end("CSI is served on the unix socket only\n");
                return;
            }
            if (rc.normalizedPath().startsWith(other)) {
                // a trailers-only gRPC answer: UNIMPLEMENTED, as for any service a server does not have
                rc.response().putHeader("content-type", "application/grpc").putHeader("grpc-status", "12")
                        .putHeader("grpc-message", otherMessage.replace(" ", "%20").replace(";", "%3B")).end();
                return;
            }
            rc.next();
        });
    }
}
