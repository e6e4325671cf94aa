package io.loopcsi.metrics;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Singleton;

import io.loopcsi.csi.DriverConfig;
import io.loopcsi.engine.CommandRunner;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Every external command the engine runs (engine.CommandRunner is the one place they run):
 * {@code loopcsi_command_duration_seconds{command}} and
 * {@code loopcsi_command_failures_total{command,reason}} (reason: exit, timeout, start; an exit
 * counts when the engine needed success, not where it reads the exit code, e.g. blkid's 2 for a
 * blank device). The command label is the program's name (mkfs.xfs, losetup...), never its arguments.
 */
@Singleton
@jakarta.enterprise.inject.Typed(CommandMetrics.class) // not an Observer bean: roles/ hands the engine this one or none
public class CommandMetrics implements CommandRunner.Observer {

    static final Duration[] BUCKETS = { Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60),
            Duration.ofSeconds(120) };

    private final MeterRegistry registry;
    private final String driver;

    CommandMetrics(MeterRegistry registry, DriverConfig config) {
        this.registry = registry;
        this.driver = config.driverName();
    }

    @Override
    public void ran(String program, long nanos) {
        String command = name(program);
        Timer.builder("loopcsi.command.duration").description("Run time of external commands, by program")
                .tags("driver", driver, "command", command).serviceLevelObjectives(BUCKETS).register(registry)
                .record(nanos, TimeUnit.NANOSECONDS);
        // a command that ran makes its failure series exist (at 0), so that rates and alerts need no absent()
        failures(command, CommandRunner.Failure.EXIT);
    }

    @Override
    public void failed(String program, CommandRunner.Failure why) {
        failures(name(program), why).increment();
    }

    private Counter failures(String command, CommandRunner.Failure why) {
        return Counter.builder("loopcsi.command.failures").description("External commands that failed, by program and reason")
                .tags("driver", driver, "command", command, "reason", why.name().toLowerCase(Locale.ROOT)).register(registry);
    }

    private static String name(String program) {
        return program.substring(program.lastIndexOf('/') + 1);
    }
}
