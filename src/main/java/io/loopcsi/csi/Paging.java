package io.loopcsi.csi;

import java.util.List;
import java.util.function.Function;

import io.grpc.Status;

/**
 * List paging over ID-sorted items. The token is the ID of the first item of the next page, so a
 * page stays correct when items before it are deleted between calls.
 */
final class Paging {

    record Page<T>(List<T> items, String nextToken) {
    }

    private Paging() {
    }

    static <T> Page<T> page(List<T> sorted, Function<T, String> id, int maxEntries, String token, Function<String, Boolean> validToken) {
        if (maxEntries < 0) {
            throw GrpcErrors.invalid("max_entries must not be negative, got " + maxEntries);
        }
        int from = 0;
        if (!token.isEmpty()) {
            if (!validToken.apply(token)) {
                throw Status.ABORTED.withDescription("starting_token " + io.loopcsi.engine.Ids.quote(token)
                        + " is not a token this driver issued; list again from the start").asRuntimeException();
            }
            while (from < sorted.size() && id.apply(sorted.get(from)).compareTo(token) < 0) {
                from++;
            }
        }
        int to = maxEntries == 0 ? sorted.size() : (int) Math.min(sorted.size(), (long) from + maxEntries);
        String next = to < sorted.size() ? id.apply(sorted.get(to)) : "";
        return new Page<>(sorted.subList(from, to), next);
    }
}
