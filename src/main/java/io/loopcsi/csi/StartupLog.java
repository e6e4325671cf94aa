package io.loopcsi.csi;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeProvider;

/**
 * Recovers the pool before anything is served, and says once serving has begun which endpoint and
 * node this process serves and what the pool holds.
 *
 * <p>Recovery (building the engine) stays before the socket is published: it removes the temp files
 * and uncommitted images of interrupted operations, which a call served meanwhile could be making.
 * The summary reads every volume's metadata and measures the pool's capacity (one {@code stat} over
 * every image): with a large pool that is seconds, and no call needs it, so it runs after the sockets
 * are published (on {@link ServingStarted}, which the launcher fires and roles.RoleWiring passes on) instead of before the first Probe.
 */
@Singleton
public class StartupLog {

    private static final Logger LOG = Logger.getLogger(StartupLog.class);

    private final DriverConfig config;
    private final Instance<VolumeProvider> providers;
    private final Instance<PoolDirectory> pools;

    StartupLog(DriverConfig config, Instance<VolumeProvider> providers, Instance<PoolDirectory> pools) {
        this.config = config;
        this.providers = providers;
        this.pools = pools;
    }

    /** Makes the engine, which recovers the pool directory: before the socket is published (roles.RoleWiring at start). */
    public void recover() {
        providers.get().nodeId();
    }

    /** Logs what this process serves and what the pool holds: once serving has begun (roles.RoleWiring on ServingStarted). */
    public void summarise() {
        try {
            VolumeProvider provider = providers.get();
            PoolDirectory pool = pools.get();
            PoolCapacity c = provider.capacity();
            LOG.infof("loopcsi %s, CSI endpoint %s, node %s: pool %s, %d volumes, %d snapshots, %s of %s allocated, %s available",
                    config.driverName(), config.endpoint().orElse("(test endpoint)"), provider.nodeId(), pool.root(),
                    provider.volumes().size(), provider.snapshots().size(), Sizes.format(c.allocatedBytes()), Sizes.format(c.totalBytes()),
                    Sizes.format(c.availableBytes()));
        } catch (RuntimeException e) {
            // a report only: the calls that need the pool answer with their own errors
            LOG.warnf("cannot summarise the pool: %s", e.getMessage());
        }
    }
}
