package io.loopcsi.csi;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.loopcsi.engine.ThickAllocation;

/**
 * The node's periodic volume check of thick allocations: at start and every
 * {@code loopcsi.thick-check-interval}, {@link ThickAllocation#keepAll()} allocates again what a
 * trim inside a thick volume punched out of its image, and records what it could not (the volume's
 * condition). Only in the roles that hold a pool directory (standalone, node).
 */
@Singleton
public class ThickAllocationCheck {

    private static final Logger LOG = Logger.getLogger(ThickAllocationCheck.class);

    private ScheduledExecutorService timer;

    private final DriverConfig config;
    private final Instance<ThickAllocation> thick;

    ThickAllocationCheck(DriverConfig config, Instance<ThickAllocation> thick) {
        this.config = config;
        this.thick = thick;
    }

    /** Starts the schedule: roles.RoleWiring, in the roles that hold a pool directory. */
    public void start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "thick-allocation-check");
            t.setDaemon(true);
            return t;
        });
        long every = config.thickCheckInterval().toMillis();
        timer.scheduleWithFixedDelay(() -> check(thick), 0, every, TimeUnit.MILLISECONDS);
    }

    private static void check(Instance<ThickAllocation> thick) {
        try {
            thick.get().keepAll();
        } catch (RuntimeException e) {
            // the next round tries again; a failure here must not end the schedule
            LOG.warnf("cannot check the thick volumes' allocation: %s", e.getMessage());
        }
    }

    public void stop() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
