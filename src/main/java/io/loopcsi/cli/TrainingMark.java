package io.loopcsi.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkus.runtime.ShutdownEvent;

/**
 * The launcher's proof that a recording start served: when it records a class-data archive or AOT
 * cache (the first start after a build, see the launcher script {@code loopcsi}), it names a file in
 * {@code $LOOPCSI_TRAINING_MARK}, made here once every socket is published. The launcher keeps the
 * archive the JVM writes at exit only when this file exists: a start that failed loaded too few
 * classes to be worth mapping.
 */
@Singleton
public class TrainingMark {

    private static final Logger LOG = Logger.getLogger(TrainingMark.class);
    static final String ENV = "LOOPCSI_TRAINING_MARK";

    /** Whether this process marked its start: its JVM then writes the archive at exit. */
    private volatile boolean marked;

    void onServing(@Observes io.loopcsi.csi.ServingStarted ev) {
        String mark = System.getenv(ENV);
        if (mark == null || mark.isBlank()) {
            return;
        }
        try {
            Files.write(Path.of(mark), new byte[0]);
            marked = true;
            LOG.info("first start of this build: the class-data archive for later starts is written when this process exits");
        } catch (IOException e) {
            LOG.debugf("cannot mark %s: %s (the launcher records the archive again at the next start)", mark, e);
        }
    }

    void onStop(@Observes ShutdownEvent ev) {
        if (marked) {
            // the JVM writes it after the shutdown: 2-20 s, once per build (docs/performance.md)
            LOG.info("writing the class-data archive for later starts: this exit takes longer, once per build");
        }
    }
}
