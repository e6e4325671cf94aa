package io.loopcsi.csi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.FailPoints;
import io.loopcsi.engine.Filesystems;
import io.loopcsi.engine.LoopDevices;
import io.loopcsi.engine.Mounter;
import io.loopcsi.engine.NodeVolumes;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.ThickAllocation;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.engine.VolumeLocks;
import io.loopcsi.engine.VolumeProvider;

/** Wires the local volume engine (standalone role) from the driver's configuration. */
@ApplicationScoped
public class EngineBeans {

    @Produces
    @Singleton
    CommandRunner runner(DriverConfig config, io.loopcsi.metrics.CommandMetrics metrics) {
        return new CommandRunner(config.commandTimeout(), metrics);
    }

    @Produces
    @Singleton
    VolumeLocks locks() {
        return new VolumeLocks();
    }

    @Produces
    @Singleton
    LoopDevices loops(CommandRunner runner) {
        return new LoopDevices(runner);
    }

    /**
     * The pool under its lock: the launcher took it before Quarkus started (so a second driver on
     * the same directory fails before it serves); without the launcher (tests) it is taken here.
     */
    @Produces
    @Singleton
    PoolDirectory pool(DriverConfig config) {
        return new PoolDirectory(Path.of(config.dataDir()).toAbsolutePath());
    }

    void releasePool(@Disposes PoolDirectory pool) {
        pool.lock().close();
    }

    /**
     * Application-scoped (a lazy proxy): the engine, and its recovery of the pool directory, is
     * made at the first CSI call, so that a role serving no CSI (operator) never touches a pool.
     */
    @Produces
    @ApplicationScoped
    VolumeProvider provider(DriverConfig config, Instance<PoolDirectory> pools, CommandRunner runner, LoopDevices loops, VolumeLocks locks,
            Instance<ApiVolumeProvider> api, Instance<ThickAllocation> thick) {
        if (config.role().equals("operator")) {
            throw new IllegalStateException("the operator role serves no CSI volumes");
        }
        if (config.role().equals("controller")) {
            return api.get(); // volumes are made by the nodes, through LoopVolume objects: no pool directory here
        }
        PoolDirectory pool = pools.get();
        VolumeEngine engine = new VolumeEngine(pool, Sizes.parse(config.capacity()), nodeId(config), runner, loops, locks,
                new FailPoints(config.failPoints().orElse(java.util.Set.of())), thick.get());
        engine.recover();
        return engine;
    }

    /** One per pool: the engine and the node share its record of thick volumes that lost blocks (their condition). */
    @Produces
    @Singleton
    ThickAllocation thickAllocation(PoolDirectory pool, CommandRunner runner, VolumeLocks locks) {
        return new ThickAllocation(pool, runner, locks);
    }

    @Produces
    @Singleton
    NodeVolumes nodeVolumes(PoolDirectory pool, LoopDevices loops, CommandRunner runner, VolumeLocks locks, ThickAllocation thick) {
        return new NodeVolumes(pool, loops, new Mounter(runner), new Filesystems(runner), locks, thick);
    }

    public static String nodeId(DriverConfig config) {
        return config.nodeId().filter(s -> !s.isBlank()).orElseGet(() -> {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                return "localhost";
            }
        });
    }
}
