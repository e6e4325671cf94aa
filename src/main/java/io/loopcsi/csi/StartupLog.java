package io.loopcsi.csi;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeProvider;
import io.quarkus.runtime.StartupEvent;

/** Says at start what is served where, and what the pool holds (building the engine also recovers it). */
@Singleton
public class StartupLog {

    private static final Logger LOG = Logger.getLogger(StartupLog.class);

    void onStart(@Observes StartupEvent ev, DriverConfig config, Instance<VolumeProvider> providers, Instance<PoolDirectory> pools) {
        if (config.role().equals("operator") || config.role().equals("controller")) {
            return; // no pool on this machine (looked up lazily: never made): those roles say what they do themselves
        }
        VolumeProvider provider = providers.get();
        PoolDirectory pool = pools.get();
        PoolCapacity c = provider.capacity();
        LOG.infof("loopcsi %s serving CSI on %s for node %s: pool %s, %d volumes, %d snapshots, %s of %s allocated, %s available",
                config.driverName(), config.endpoint().orElse("(test endpoint)"), provider.nodeId(), pool.root(),
                provider.volumes().size(), provider.snapshots().size(), Sizes.format(c.allocatedBytes()), Sizes.format(c.totalBytes()),
                Sizes.format(c.availableBytes()));
    }
}
