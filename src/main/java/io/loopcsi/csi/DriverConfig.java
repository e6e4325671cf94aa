package io.loopcsi.csi;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;

/** The driver's settings; the launcher's flags (see cli.Main) map onto these. */
@ConfigMapping(prefix = "loopcsi")
public interface DriverConfig {

    /** The role this process runs (set by the launcher): standalone serves CSI; operator serves no CSI at all. */
    @WithDefault("standalone")
    String role();

    /** CSI driver name, reported by GetPluginInfo. */
    @WithDefault("loopcsi.io")
    String driverName();

    /** The CSI endpoint (unix:///PATH or tcp://HOST:PORT) that CsiServer serves, set by the launcher; unset: no CSI served. */
    Optional<String> endpoint();

    /**
     * Where CsiServer binds a unix endpoint instead of its own path: the launcher's
     * csi.PrivateSocket, which publishes the socket under the endpoint's name once it is 0600
     * (issue 15). Unset: the endpoint's own path.
     */
    Optional<String> csiBindPath();

    /** This node's ID (NodeGetInfo, topology); the host name when unset. */
    Optional<String> nodeId();

    /** The pool directory: images and metadata of every volume and snapshot. */
    @WithDefault("data")
    String dataDir();

    /** The pool's capacity on this node, e.g. 20Gi. */
    @WithDefault("20Gi")
    String capacity();

    /** Free space of the host filesystem under the pool that the pool never counts as available (engine.CapacityPolicy), e.g. 10Gi. */
    @WithDefault("0")
    String hostReserve();

    /** How far thin volumes' sizes may exceed the capacity: 1 (default, none) to 100 (engine.CapacityPolicy). */
    @WithDefault("1")
    double thinOvercommit();

    /** Where staging and target paths may lie (after symlinks are followed); "/" allows any path. */
    @WithDefault("/")
    java.util.List<String> allowedRoots();

    /** NodeGetInfo's max_volumes_per_node; 0 = no limit. */
    @WithDefault("0")
    long maxVolumesPerNode();

    /** Crash points to arm, for the crash-consistency tests only (see engine.FailPoints). */
    Optional<java.util.Set<String>> failPoints();

    /**
     * The operator role's namespace for the pools' components (--namespace). Declared here so that
     * the mapping accepts the property; the operator reads it through OperatorSettings.
     */
    @WithName("operator.namespace")
    Optional<String> operatorNamespace();

    /** Timeout of every external command (losetup, mkfs, mount...). */
    @WithDefault("120s")
    Duration commandTimeout();

    /**
     * How often the node checks that every thick volume's image is still fully allocated and
     * allocates what a trim inside punched out (engine.ThickAllocation): the longest a trimmed
     * thick volume stays short of its blocks.
     */
    @WithDefault("60s")
    Duration thickCheckInterval();
}
