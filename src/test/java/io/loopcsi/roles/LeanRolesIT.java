package io.loopcsi.roles;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.loopcsi.testing.DriverProcess;
import io.loopcsi.testing.KernelCleanup;

/**
 * The packaged standalone driver loads none of the work of the roles it is not (issue 33): it
 * starts no informer, carries out no hand-off object, starts no Operator. roles.RoleWiring looks up
 * only what the role uses; before it, the node role's start observer was made in every role, and
 * its handlers and the hand-off types came along.
 *
 * <p>What is still loaded, and why (measured, issue 33's report): ArC registers every bean at start
 * and loads each bean's class and types (the node's, controller's and operator's beans, so the
 * Kubernetes client's interfaces and JOSDK's Reconciler among them); quarkus-kubernetes-client's
 * static-init recorder loads every fabric8 model class it lists; the Micrometer extension makes its
 * registry at run-time init. None of the three has a run-time switch in Quarkus 3.27 / QOSDK 7.2.
 */
class LeanRolesIT {

    /** Classes that only a role's own work loads. */
    private static final Pattern OTHER_ROLES_WORK = Pattern.compile("^(io\\.loopcsi\\.handoff\\.|io\\.loopcsi\\.node\\.(VolumeHandler|"
            + "SnapshotHandler|GroupSnapshotHandler|WorkQueue|CapacityPublisher|KubeletRegistration)\\b|io\\.fabric8\\.kubernetes\\.client\\.informers\\.impl\\."
            + "|io\\.fabric8\\.kubernetes\\.client\\.impl\\.)");

    @Test
    void standaloneLoadsNoOtherRolesWork() throws Exception {
        Path dir = Files.createTempDirectory("loopcsi-lean-").toRealPath();
        try {
            Path log = dir.resolve("classes.log");
            try (DriverProcess d = DriverProcess.start(dir, "-Xlog:class+load=info:file=" + log)) {
                d.terminate();
            }
            List<String> loaded = Files.readAllLines(log).stream().map(l -> l.replaceFirst("^\\[[^]]*]\\[[^]]*]\\[[^]]*] ", ""))
                    .map(l -> l.split(" ", 2)[0]).filter(c -> OTHER_ROLES_WORK.matcher(c).find()).toList();
            assertEquals(List.of(), loaded, "classes of other roles' work loaded by standalone");
        } finally {
            KernelCleanup.releaseAndDelete(dir);
        }
    }
}
