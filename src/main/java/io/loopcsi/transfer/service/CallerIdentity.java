package io.loopcsi.transfer.service;

/**
 * The node a caller is, checked; a caller that cannot be identified is refused
 * ({@link io.loopcsi.transfer.TransferException} DENIED, with the reason).
 */
@FunctionalInterface
public interface CallerIdentity {

    String nodeOf(Caller caller);
}
