package io.loopcsi.csi;

import java.util.List;

import io.grpc.ServerInterceptor;

/**
 * What wraps every call CsiServer serves, outermost last (grpc-java's ServerInterceptors order).
 * roles/ decides what goes in (the CSI call metrics when this process serves metrics), so that this
 * package names no metrics registry.
 */
public record CallInterceptors(List<ServerInterceptor> list) {
}
