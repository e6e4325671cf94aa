package io.loopcsi.engine;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import io.loopcsi.testing.KernelCleanup;

/**
 * A fresh directory per test under one directory per class; whatever a test mounted or attached
 * under them is released afterwards, also when the test failed (and again per class, as a net).
 */
abstract class KernelTestDirs {

    private static Path classDir;
    /** This test's directory. */
    protected Path dir;

    @BeforeAll
    static void makeClassDir() throws Exception {
        classDir = Files.createTempDirectory(Path.of("/tmp"), "loopcsi-engine-");
    }

    @AfterAll
    static void removeClassDir() {
        KernelCleanup.releaseAndDelete(classDir);
    }

    @BeforeEach
    void makeTestDir() throws Exception {
        dir = Files.createTempDirectory(classDir, "t");
    }

    @AfterEach
    void releaseTestDir() {
        PoolLock.releaseAllUnder(dir);
        KernelCleanup.releaseAndDelete(dir);
    }
}
