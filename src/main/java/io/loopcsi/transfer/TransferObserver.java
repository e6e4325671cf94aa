package io.loopcsi.transfer;

/**
 * What a node's transfers report for its metrics (metrics.TransferMetrics; docs/metrics.md):
 * bytes of data sent as source and received as destination, the streams and fetches under way,
 * the fetches that failed (by reason) and how long a fetch took. {@link #NONE} where no metrics
 * are served.
 */
public interface TransferObserver {

    /** A side of a transfer on this node. */
    enum Direction {
        SEND, RECEIVE
    }

    void bytes(Direction d, long bytes);

    /** A stream (send) or a fetch (receive) began; each is followed by one {@link #ended}. */
    void started(Direction d);

    void ended(Direction d);

    /** A fetch ended (well or not) after nanos; a failed one also with {@link #failed}. */
    void fetched(long nanos);

    /** A fetch failed; reason: a short lower-case word (a gRPC code, mismatch, invalid, denied, ...). */
    void failed(String reason);

    TransferObserver NONE = new TransferObserver() {
        @Override
        public void bytes(Direction d, long bytes) {
        }

        @Override
        public void started(Direction d) {
        }

        @Override
        public void ended(Direction d) {
        }

        @Override
        public void fetched(long nanos) {
        }

        @Override
        public void failed(String reason) {
        }
    };
}
