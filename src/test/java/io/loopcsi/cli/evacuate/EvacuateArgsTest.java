package io.loopcsi.cli.evacuate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The command line of loopcsi evacuate: a bad flag is one line and exit 64, before any cluster is asked. */
class EvacuateArgsTest {

    record Run(int status, String out, String err) {
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Evacuate.main(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryFlag() {
        Run r = run("--help");
        assertEquals(0, r.status());
        for (String f : List.of("--node", "--pool", "--apply", "--keep-source", "--evict", "--copy-timeout")) {
            assertTrue(r.out().contains(f), f);
        }
    }

    @Test
    void badArgumentsAreOneLineAndExit64() {
        assertEquals(new Run(64, "", "loopcsi: --node is required: the node to empty (loopcsi evacuate --help)\n"), run("--apply"));
        assertEquals("loopcsi: unknown flag --force for evacuate (loopcsi evacuate --help)\n", run("--node", "a", "--force").err());
        assertEquals("loopcsi: --node: not a Kubernetes name: 'Node_A'\n", run("--node", "Node_A").err());
        assertEquals("loopcsi: --copy-timeout: not a duration: '5 minutes' (e.g. 90s, 30m, 2h)\n", run("--node=a", "--copy-timeout", "5 minutes").err());
        assertEquals("loopcsi: --node needs a value\n", run("--node").err());
    }

    @Test
    void theOptionsAsParsed() {
        Evacuate.Options o = Evacuate.parse(List.of("--node=node-a", "--pool", "p", "--apply", "--keep-source", "--evict", "--copy-timeout", "30m"));
        assertEquals(new Evacuate.Options("node-a", "p", true, true, true, Duration.ofMinutes(30)), o);
        assertEquals(new Evacuate.Options("node-a", null, false, false, false, Duration.ofHours(1)), Evacuate.parse(List.of("--node", "node-a")));
    }
}
