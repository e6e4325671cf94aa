package io.loopcsi.transfer.service;

import java.util.Optional;

import io.loopcsi.transfer.TransferGrant;

/** The authorisation of a transfer, by its ID (the controller's LoopTransfer); empty when none names it. */
@FunctionalInterface
public interface Grants {

    Optional<TransferGrant> find(String transferId);
}
