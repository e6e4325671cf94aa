package io.loopcsi.controller;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.loopcsi.csi.DriverConfig;
import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.Sizes;

/**
 * Starts the controller role's informers at start (not at the first call), then its sweep of
 * transfers that are over, and says what it serves.
 */
@Singleton
public class ControllerRole {

    private static final Logger LOG = Logger.getLogger(ControllerRole.class);

    private final DriverConfig config;
    private final ControllerRoleConfig controller;
    private final Instance<ApiVolumeProvider> provider;

    ControllerRole(DriverConfig config, ControllerRoleConfig controller, Instance<ApiVolumeProvider> provider) {
        this.config = config;
        this.controller = controller;
        this.provider = provider;
    }

    /** Lists and watches the pool's objects: roles.RoleWiring, in the controller role, before the socket is published. */
    public void start() {
        ApiVolumeProvider p = provider.get().sweepTransfers(controller.transferSweep()); // the informers have listed: the bean started them
        PoolCapacity c = p.capacity();
        LOG.infof("loopcsi controller %s serving CSI on %s for pool %s: %d volumes, %d snapshots, %s available on the nodes that report",
                config.driverName(), config.endpoint().orElse("(test endpoint)"), controller.pool().orElse("?"), p.volumes().size(),
                p.snapshots().size(), Sizes.format(c.availableBytes()));
    }
}
