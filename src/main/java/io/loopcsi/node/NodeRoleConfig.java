package io.loopcsi.node;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Settings of the node role (the launcher's node flags map onto these). */
@ConfigMapping(prefix = "loopcsi.node")
public interface NodeRoleConfig {

    /** The StoragePool this node serves (its LoopVolumes are labelled with it). */
    Optional<String> pool();

    /** kubelet's plugin registration socket; default /var/lib/kubelet/plugins_registry/DRIVER-reg.sock. */
    Optional<String> registrationSocket();

    /** How often the node writes its LoopPoolNode status even when nothing changed. */
    @WithDefault("20s")
    Duration heartbeat();

    /**
     * Where the transfer server binds, host:port (issue 35; docs/architecture.md, "Transfer"). Unset:
     * this node serves no transfers and publishes no certificate.
     */
    Optional<String> transferAddress();

    /** The namespace of the pool's node pods, whose tokens the transfer server accepts (needed with transferAddress). */
    Optional<String> transferNamespace();

    /** The name of the pool's node ServiceAccount and DaemonSet (the operator gives both the same; needed with transferAddress). */
    Optional<String> transferNodeAccount();

    /**
     * The address peers call, host:port, when it is not transferAddress (which may bind 0.0.0.0): the
     * pod's IP. Published in the LoopPoolNode.
     */
    Optional<String> transferAdvertiseAddress();

    /**
     * The projected service-account token (audience loopcsi.io/transfer) this node sends when it
     * fetches a transfer, read anew for every call (kubelet rotates it). Unset: this node serves
     * transfers but cannot fetch one.
     */
    Optional<String> transferTokenFile();

    /**
     * The most bytes per second this node sends for transfers, all together (StoragePool
     * spec.transfer.bandwidthPerNode). Unset: no cap.
     */
    Optional<Long> transferBandwidth();

    /**
     * How many transfers this node serves at once (spec.transfer.maxConcurrentPerNode); one more is
     * refused with RESOURCE_EXHAUSTED and its destination tries again later.
     */
    @WithDefault("2")
    int transferConcurrency();

    /**
     * How often the node looks for transfers that ended, to delete the copies of their source
     * volumes it made (TransferSweeper): one directory listing when it holds none. Shorter only
     * in tests, which wait for the copy to go.
     */
    @WithDefault("60s")
    Duration transferSweep();

    /** How long a failed delete waits before the node tries again. */
    @WithDefault("10s")
    Duration retry();
}
