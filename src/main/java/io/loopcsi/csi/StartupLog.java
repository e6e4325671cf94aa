package io.loopcsi.csi;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import org.jboss.logging.Logger;

import io.loopcsi.engine.PoolCapacity;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.VolumeProvider;
import io.quarkus.runtime.StartupEvent;

/**
 * Says at start which endpoint and node this process serves and what the pool holds (building the
 * engine also recovers it). It runs after {@link CsiServer} has bound, and claims no more than that:
 * a unix socket is reachable once the launcher has published it ("socket ... published").
 */
@Singleton
public class StartupLog {

    private static final Logger LOG = Logger.getLogger(StartupLog.class);

    void onStart(@Observes @Priority(Interceptor.Priority.APPLICATION + 900) StartupEvent ev, DriverConfig config, Instance<VolumeProvider> providers, Instance<PoolDirectory> pools) {
        if (config.role().equals("operator") || config.role().equals("controller")) {
            return; // no pool on this machine (looked up lazily: never made): those roles say what they do themselves
        }
        VolumeProvider provider = providers.get();
        PoolDirectory pool = pools.get();
        PoolCapacity c = provider.capacity();
        LOG.infof("loopcsi %s, CSI endpoint %s, node %s: pool %s, %d volumes, %d snapshots, %s of %s allocated, %s available",
                config.driverName(), config.endpoint().orElse("(test endpoint)"), provider.nodeId(), pool.root(),
                provider.volumes().size(), provider.snapshots().size(), Sizes.format(c.allocatedBytes()), Sizes.format(c.totalBytes()),
                Sizes.format(c.availableBytes()));
    }
}
