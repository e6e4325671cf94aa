package io.loopcsi.csi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Singleton;

import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.FailPoints;
import io.loopcsi.engine.Filesystems;
import io.loopcsi.engine.LoopDevices;
import io.loopcsi.engine.Mounter;
import io.loopcsi.engine.NodeVolumes;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.SectorSizes;
import io.loopcsi.engine.Sizes;
import io.loopcsi.engine.ThickAllocation;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.engine.VolumeLocks;

/**
 * Wires the local volume engine (standalone and node roles) from the driver's configuration.
 * Which provider a role's CSI services get is decided above this package (roles.VolumeProviders).
 */
@ApplicationScoped
public class EngineBeans {

    @Produces
    @Singleton
    CommandRunner runner(DriverConfig config, CommandRunner.Observer observer) {
        return new CommandRunner(config.commandTimeout(), observer); // the observer: roles/ (command metrics, or none)
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
     * The local engine over the pool directory, recovered (what interrupted operations left is
     * removed) before it is handed out. Typed as VolumeEngine only, so that it is not a second
     * VolumeProvider bean; made only when a role asks for it (the controller and operator roles never do).
     */
    @Produces
    @Singleton
    @Typed(VolumeEngine.class)
    VolumeEngine engine(DriverConfig config, PoolDirectory pool, CommandRunner runner, LoopDevices loops, VolumeLocks locks,
            ThickAllocation thick, SectorSizes sectors) {
        io.loopcsi.engine.CapacityPolicy policy = new io.loopcsi.engine.CapacityPolicy(Sizes.parse(config.capacity()),
                Sizes.parse(config.hostReserve()), config.thinOvercommit());
        VolumeEngine engine = new VolumeEngine(pool, policy, nodeId(config), runner, loops, locks,
                new FailPoints(config.failPoints().orElse(java.util.Set.of())), thick, sectors);
        engine.recover();
        return engine;
    }

    /** One per pool: the engine and the node share its record of thick volumes that lost blocks (their condition). */
    @Produces
    @Singleton
    ThickAllocation thickAllocation(PoolDirectory pool, CommandRunner runner, VolumeLocks locks) {
        return new ThickAllocation(pool, runner, locks);
    }

    /** One per pool: the sector size new volumes get is probed once, at the first create or stage that needs it. */
    @Produces
    @Singleton
    SectorSizes sectorSizes(PoolDirectory pool, CommandRunner runner, LoopDevices loops) {
        return new SectorSizes(pool, runner, loops);
    }

    @Produces
    @Singleton
    NodeVolumes nodeVolumes(PoolDirectory pool, LoopDevices loops, CommandRunner runner, VolumeLocks locks, ThickAllocation thick,
            SectorSizes sectors) {
        return new NodeVolumes(pool, loops, new Mounter(runner), new Filesystems(runner), locks, thick, sectors);
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
