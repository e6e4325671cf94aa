package io.loopcsi.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

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

    void onServing(@Observes ServingStarted ev) {
        String mark = System.getenv(ENV);
        if (mark == null || mark.isBlank()) {
            return;
        }
        try {
            Files.write(Path.of(mark), new byte[0]);
            // the JVM writes the archive when it exits, which makes this one exit slower (seconds for a JDK 25 AOT cache)
            LOG.infof("first start of this build: the class-data archive for later starts is written when this process exits");
        } catch (IOException e) {
            LOG.debugf("cannot mark %s: %s (the launcher records the archive again at the next start)", mark, e);
        }
    }
}
