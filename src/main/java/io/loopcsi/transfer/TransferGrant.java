package io.loopcsi.transfer;

import java.time.Duration;
import java.time.Instant;

/**
 * The controller's authorisation of one transfer (what its LoopTransfer object says): one source
 * object on one source node, to one destination node, inside one time window. The source node's
 * server checks every call against it ({@link #check}); nothing else is served.
 */
public record TransferGrant(String transferId, String source, String sourceNode, String destinationNode, Instant notBefore,
        Instant notAfter) {

    /** No window is longer: a grant that outlives its transfer by days is a mistake, not an authorisation. */
    public static final Duration LONGEST_WINDOW = Duration.ofHours(24);

    /**
     * Whether this node, serving, may give the caller (the node its identity was checked to be)
     * the source for the transfer now; DENIED with the first rule broken, for the log and the caller.
     * A missing grant is refused too: a transfer without one is never served.
     */
    public static void check(TransferGrant grant, String transferId, String source, String servingNode, String callerNode, Instant now) {
        if (grant == null) {
            throw TransferException.denied("transfer " + transferId + " is not authorised (no LoopTransfer names it)");
        }
        if (!grant.transferId().equals(transferId)) {
            throw TransferException.denied("the authorisation is of transfer " + grant.transferId() + ", not of " + transferId);
        }
        if (!grant.sourceNode().equals(servingNode)) {
            throw TransferException.denied("transfer " + transferId + " is authorised from node " + grant.sourceNode() + ", this is node "
                    + servingNode);
        }
        if (callerNode == null || !grant.destinationNode().equals(callerNode)) {
            throw TransferException.denied("transfer " + transferId + " is authorised to node " + grant.destinationNode() + ", the caller is "
                    + (callerNode == null ? "not identified" : "node " + callerNode));
        }
        if (!grant.source().equals(source)) {
            throw TransferException.denied("transfer " + transferId + " is authorised for " + grant.source() + ", not for " + source);
        }
        if (grant.notAfter().isBefore(grant.notBefore()) || Duration.between(grant.notBefore(), grant.notAfter()).compareTo(LONGEST_WINDOW) > 0) {
            throw TransferException.denied("transfer " + transferId + " has a window [" + grant.notBefore() + ", " + grant.notAfter()
                    + ") that is empty or longer than " + LONGEST_WINDOW.toHours() + " h");
        }
        if (now.isBefore(grant.notBefore()) || !now.isBefore(grant.notAfter())) {
            throw TransferException.denied("transfer " + transferId + " is authorised within [" + grant.notBefore() + ", " + grant.notAfter()
                    + "), not at " + now);
        }
    }
}
