package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Every flag of every role is checked before Quarkus starts: a bad value is a usage error naming
 * the flag and saying what would do (Main prints it as one line, exit 64). RoleFlagsIT and
 * LauncherMessagesIT run the packaged launcher for a representative few.
 */
class FlagsTest {

    /** For each role, each flag with a bad value and the words its message must have. */
    static final Map<String, List<String[]>> BAD = Map.of(
            "standalone", List.of(
                    new String[] { "--capacity", "abc", "--capacity: not a size: 'abc' (use e.g. 20Gi, 500Mi or bytes)" },
                    new String[] { "--capacity", "0", "--capacity: must be more than 0" },
                    new String[] { "--host-reserve", "-1Gi", "--host-reserve: not a size: '-1Gi'" },
                    new String[] { "--thin-overcommit", "0.5", "--thin-overcommit: not a ratio from 1 to 100: '0.5'" },
                    new String[] { "--endpoint", "http://x", "--endpoint: endpoint http://x: expected unix:///PATH" },
                    new String[] { "--data-dir", "", "--data-dir: empty path" },
                    new String[] { "--node-id", "-bad-", "--node-id: not a topology value" },
                    new String[] { "--driver-name", "a_b", "--driver-name: not a CSI driver name" },
                    new String[] { "--max-volumes", "-1", "--max-volumes: not a whole number of 0 or more: '-1'" },
                    new String[] { "--allowed-roots", "/a,rel", "--allowed-roots: not an absolute path: 'rel'" }),
            "controller", List.of(
                    new String[] { "--pool", "Pool!", "--pool: not a Kubernetes name" },
                    new String[] { "--driver-name", "x".repeat(64), "--driver-name: longer than 63 characters" },
                    new String[] { "--http-address", "nope", "--http-address: not HOST:PORT: 'nope'" },
                    new String[] { "--endpoint", "tcp://h", "--endpoint: endpoint tcp://h: expected tcp://HOST:PORT" }),
            "node", List.of(
                    new String[] { "--node-name", "Node_1", "--node-name: not a Kubernetes name" },
                    new String[] { "--capacity", "1.5GB", "--capacity: not a size: '1.5GB'" },
                    new String[] { "--host-reserve", "10GB", "--host-reserve: not a size: '10GB'" },
                    new String[] { "--thin-overcommit", "1e3", "--thin-overcommit: not a ratio from 1 to 100: '1e3'" },
                    new String[] { "--registration-socket", " ", "--registration-socket: empty path" },
                    new String[] { "--pool", "p".repeat(64), "--pool: longer than 63 characters" },
                    new String[] { "--max-volumes", "many", "--max-volumes: not a whole number" },
                    new String[] { "--http-address", "h:70000", "--http-address: not HOST:PORT" }),
            "operator", List.of(
                    new String[] { "--namespace", "my.ns", "--namespace: not a namespace name" },
                    new String[] { "--http-address", ":x", "--http-address: not HOST:PORT" }),
            "doctor", List.of(
                    new String[] { "--format", "yaml", "--format: 'yaml' is not one of table, json" },
                    new String[] { "--capacity", "20GB", "--capacity: not a size" },
                    new String[] { "--remove-orphan", "../etc/passwd", "--remove-orphan: not a volume or snapshot ID" }));

    @Test
    void aBadValueOfAnyFlagNamesTheFlagAndWhatWouldDo() {
        BAD.forEach((role, cases) -> {
            for (String[] c : cases) {
                Flags.UsageError e = assertThrows(Flags.UsageError.class, () -> Flags.parse(role, List.of(c[0], c[1])), role + " " + c[0]);
                assertTrue(e.getMessage().startsWith(c[2]), role + " " + c[0] + " " + c[1] + ": " + e.getMessage());
                assertEquals(1, e.getMessage().lines().count(), e.getMessage());
                // the same with --flag=VALUE
                assertThrows(Flags.UsageError.class, () -> Flags.parse(role, List.of(c[0] + "=" + c[1])));
            }
        });
    }

    @Test
    void everyFlagOfEveryRoleIsDocumentedInHelpAndTheReadme() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        for (Flags.Flag f : Flags.ALL) {
            assertTrue(Main.USAGE.contains(f.name()), f.name() + " in --help");
            assertTrue(readme.contains("`" + f.name() + "`"), f.name() + " in README.md");
        }
        for (String role : Flags.ROLES) {
            assertTrue(Main.USAGE.contains(role), role);
            assertTrue(BAD.containsKey(role), "a bad value is tried for role " + role);
        }
    }

    @Test
    void aFlagOfAnotherRoleAMissingValueAndAStrayWordAreUsageErrors() {
        assertTrue(assertThrows(Flags.UsageError.class, () -> Flags.parse("controller", List.of("--data-dir", "/x"))).getMessage()
                .startsWith("unknown flag --data-dir for role controller"));
        assertEquals("--capacity needs a value", assertThrows(Flags.UsageError.class, () -> Flags.parse("node", List.of("--capacity")))
                .getMessage());
        assertTrue(assertThrows(Flags.UsageError.class, () -> Flags.parse("standalone", List.of("serve"))).getMessage()
                .startsWith("unexpected argument 'serve'"));
    }

    @Test
    void goodValuesBecomeTheirProperties() {
        Flags.Parsed p = Flags.parse("node", List.of("--pool", "local", "--node-name", "worker-1.example", "--capacity", "50Gi",
                "--allowed-roots", "/var/lib/kubelet, /mnt", "--max-volumes", "07", "--http-address", "[::1]:9091", "--driver-name",
                "local.loopcsi.io", "--registration-socket", "/r.sock", "--data-dir", "/var/lib/loopcsi/local", "--endpoint", "/p/csi.sock"));
        Map<String, String> props = p.properties();
        assertEquals("local", props.get("loopcsi.node.pool"));
        assertEquals("worker-1.example", props.get("loopcsi.node-id"));
        assertEquals("50Gi", props.get("loopcsi.capacity"));
        assertEquals("/var/lib/kubelet,/mnt", props.get("loopcsi.allowed-roots"));
        assertEquals("7", props.get("loopcsi.max-volumes-per-node"));
        assertEquals("::1", props.get("quarkus.http.host"));
        assertEquals("9091", props.get("quarkus.http.port"));
        assertEquals("unix:///p/csi.sock", props.get("loopcsi.endpoint"));
        assertEquals("controller-pool", Flags.parse("controller", List.of("--pool=controller-pool")).properties().get("loopcsi.controller.pool"));
    }
}
