package io.loopcsi.csi;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.loopcsi.engine.ThickAllocation;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

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

    void onStart(@Observes StartupEvent ev, DriverConfig config, Instance<ThickAllocation> thick) {
        String role = config.role();
        if (!(role.equals("standalone") || role.equals("node")) || config.endpoint().isEmpty()) {
            return; // no pool directory in this process
        }
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

    void onStop(@Observes ShutdownEvent ev) {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
