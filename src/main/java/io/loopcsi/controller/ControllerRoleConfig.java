package io.loopcsi.controller;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Settings of the controller role (the launcher's controller flags map onto these). */
@ConfigMapping(prefix = "loopcsi.controller")
public interface ControllerRoleConfig {

    /** The StoragePool this controller serves. */
    Optional<String> pool();

    /**
     * How long a call waits for the node's answer in status. Below csi-provisioner's --timeout
     * (120s in the pods), so the sidecar gets our DEADLINE_EXCEEDED rather than cancelling.
     */
    @WithDefault("100s")
    Duration answerTimeout();

    /** A node whose LoopPoolNode heartbeat is older than this is not serving: it gets no volumes, its capacity is 0. */
    @WithDefault("60s")
    Duration nodeStaleAfter();

    /**
     * How often the controller deletes the pool's LoopTransfers that are over (TransferSweep), so
     * that their source nodes free the copies they keep for them. Shorter only in tests.
     */
    @WithDefault("60s")
    Duration transferSweep();
}
