package io.loopcsi.cli.csc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import csi.v1.CapacityRange;

/** Flag parsing and usage errors: none of these reach a driver (the endpoint does not exist). */
class CommandLineTest {

    static final String NOWHERE = "unix:///nonexistent/loopcsi-csc-test.sock";

    @Test
    void flagsMayComeAnywhereInEitherSpelling() throws UsageException {
        CommandLine line = CommandLine.parse(List.of("--endpoint", "/x.sock", "controller", "--cap=1,block", "new", "a",
                "--cap", "5,mount,xfs", "--read-only", "--", "--b"));
        assertEquals(List.of("controller", "new", "a", "--b"), line.positionals());
        assertEquals(List.of("1,block", "5,mount,xfs"), line.all(Flag.CAP));
        assertEquals("/x.sock", line.last(Flag.ENDPOINT));
        assertTrue(line.isOn(Flag.READ_ONLY));
        assertEquals("false", CommandLine.parse(List.of("--read-only=False")).last(Flag.READ_ONLY));
    }

    @Test
    void oldCscSpellingsMapToOneFlag() throws UsageException {
        CommandLine line = CommandLine.parse(List.of("--attribs", "a=1", "--vol-context", "b=2", "--volume-src", "v", "-e", "e", "-t", "2s"));
        assertEquals(List.of("a=1", "b=2"), line.all(Flag.VOL_CONTEXT));
        assertEquals("v", line.last(Flag.SOURCE_VOLUME));
        assertEquals("e", line.last(Flag.ENDPOINT));
        assertEquals("2s", line.last(Flag.TIMEOUT));
    }

    @Test
    void optionsParseEveryValue() throws UsageException {
        Options o = Options.of(CommandLine.parse(List.of("--req-bytes", "1Gi", "--lim-bytes", "2147483648", "--params", "a=1,b",
                "--params", "c=x=y", "--timeout", "1m30s", "--format", "json", "--max-entries", "3")), Map.of("CSI_ENDPOINT", "/s.sock"));
        assertEquals(CapacityRange.newBuilder().setRequiredBytes(1L << 30).setLimitBytes(2147483648L).build(), o.capacityRange.get());
        assertEquals(Map.of("a", "1", "b", "", "c", "x=y"), o.params);
        assertEquals(Duration.ofSeconds(90), o.timeout);
        assertTrue(o.json);
        assertEquals(3, o.maxEntries);
        assertEquals("unix:///s.sock", o.endpoint.toString());
        assertEquals(Options.DEFAULT_TIMEOUT, Options.of(CommandLine.parse(List.of("-e", "/s")), Map.of()).timeout);
        assertTrue(Options.of(CommandLine.parse(List.of("-e", "/s")), Map.of()).capacityRange.isEmpty());
    }

    @Test
    void goDurations() throws UsageException {
        assertEquals(Duration.ofMillis(500), Values.duration(Flag.TIMEOUT, "500ms"));
        assertEquals(Duration.ofMinutes(90), Values.duration(Flag.TIMEOUT, "1.5h"));
        assertEquals(Duration.ofSeconds(3661), Values.duration(Flag.TIMEOUT, "1h1m1s"));
        assertEquals(Duration.ofNanos(1500), Values.duration(Flag.TIMEOUT, "1us500ns"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            // what was typed                                                     | what stderr must say
            "controller new v --bogus                                            | unknown flag --bogus",
            "controller new v --cap                                              | flag --cap needs a value: --cap MODE,TYPE",
            "controller new v --cap 1,blok                                       | --cap \"1,blok\": access type \"blok\" is not block, mount, 1 or 2",
            "controller new v --cap SINGLE_NODE_WRITER                           | --cap \"SINGLE_NODE_WRITER\": expected MODE,TYPE",
            "controller new v --req-bytes 1GB                                    | --req-bytes \"1GB\": expected a number of bytes",
            "controller new v --req-bytes 99999999999Ti                          | --req-bytes \"99999999999Ti\": too large for an int64",
            "controller new v --params =1                                        | --params \"=1\": empty key in \"=1\"",
            "controller new v --source-volume a --source-snapshot b              | --source-volume and --source-snapshot exclude each other",
            "controller new                                                      | 'controller create-volume' takes at least 1 argument (NAME...), got 0",
            "controller list-volumes --max-entries -1                            | --max-entries \"-1\": expected a non-negative 32-bit integer",
            "controller list-volumes extra                                       | 'controller list-volumes' takes 0 arguments, got 1: extra",
            "controller create-snapshot s                                        | 'controller create-snapshot' needs --source-volume VOLUME_ID",
            "controller frobnicate                                               | unknown controller verb 'frobnicate'; one of: create-volume,",
            "controller                                                          | missing controller VERB; one of: create-volume,",
            "storage plugin-info                                                 | unknown service 'storage'; one of identity, controller, group, node",
            "''                                                                  | missing SERVICE: one of identity, controller, group, node",
            "node unpublish v --target-path /t --cap 1,block                     | flag --cap does not apply to 'node unpublish'",
            "node publish v --read-only=yes                                      | flag --read-only is a switch: --read-only or --read-only=true|false",
            "node stage v --cap 1,block --cap 1,block                            | --cap given 2 times; this verb sends one volume capability",
            "node expand v                                                       | 'node expand' takes 2 arguments (VOLUME_ID VOLUME_PATH), got 1: v",
            "node stats v                                                        | 'node stats' argument \"v\": expected VOLUME_ID:VOLUME_PATH[:STAGING_PATH]",
            "node stats v:/p :/q                                                 | 'node stats' argument \":/q\": expected",
            "identity probe --timeout 5                                          | --timeout \"5\": expected a duration such as 30s",
            "identity probe --timeout 0s                                         | --timeout \"0s\": must be positive",
            "identity probe --format yaml                                        | --format \"yaml\": only json is supported",
    })
    void usageErrorsNameTheBadPartAndSendNothing(String line, String message) {
        List<String> words = line.isEmpty() ? List.of() : List.of(line.split(" "));
        // the endpoint goes first: a flag at the end would take it as its value
        CscRun r = CscRun.run(prepend(words, "-e", NOWHERE));
        assertEquals(Csc.EXIT_USAGE, r.status(), r::toString);
        assertEquals("", r.out(), r::toString);
        assertTrue(r.err().startsWith("loopcsi csc: " + message), r::toString);
    }

    @Test
    void endpointComesFromTheFlagElseFromCsiEndpoint() {
        CscRun none = CscRun.run("identity", "probe");
        assertEquals(Csc.EXIT_USAGE, none.status());
        assertTrue(none.err().startsWith("loopcsi csc: no endpoint: give --endpoint"), none::toString);

        CscRun bad = CscRun.run("identity", "probe", "--endpoint", "ftp://host");
        assertEquals(Csc.EXIT_USAGE, bad.status());
        assertTrue(bad.err().startsWith("loopcsi csc: --endpoint: endpoint ftp://host: expected"), bad::toString);

        // CSI_ENDPOINT is used: the call is attempted and fails as gRPC reports it
        CscRun env = CscRun.run(Map.of("CSI_ENDPOINT", NOWHERE), "identity", "probe");
        assertEquals(14, env.status(), env::toString);
        assertTrue(env.err().startsWith("UNAVAILABLE: "), env::toString);
        assertEquals("", env.out());
    }

    @Test
    void helpAtEveryLevelGoesToStdout() {
        CscRun top = CscRun.run("--help");
        assertEquals(0, top.status());
        assertTrue(top.out().startsWith("usage: loopcsi csc SERVICE VERB"), top::toString);
        assertTrue(top.out().contains("create-volume NAME..."), top::toString);

        CscRun service = CscRun.run("node", "-h");
        assertTrue(service.out().startsWith("usage: loopcsi csc node VERB"), service::toString);

        CscRun verb = CscRun.run("controller", "rm", "--help");
        assertEquals(0, verb.status());
        assertTrue(verb.out().startsWith("usage: loopcsi csc controller delete-volume VOLUME_ID... [FLAGS]"), verb::toString);
        assertTrue(verb.out().contains("invokes the rpc DeleteVolume"), verb::toString);
        assertEquals("", verb.err());
    }

    @Test
    void aliasesAsInCsc() throws UsageException {
        assertEquals("create-volume", Verbs.find("controller", "new").name());
        assertEquals("create-volume", Verbs.find("controller", "create").name());
        assertEquals("delete-volume", Verbs.find("controller", "del").name());
        assertEquals("delete-volume", Verbs.find("controller", "rm").name());
        assertEquals("list-volumes", Verbs.find("controller", "ls").name());
        assertEquals("validate-volume-capabilities", Verbs.find("controller", "validate").name());
        assertEquals("publish", Verbs.find("node", "mount").name());
        assertEquals("expand", Verbs.find("node", "expand-volume").name());
        assertEquals("plugin-info", Verbs.find("identity", "info").name());
    }

    @Test
    void quotesAsGoDoes() {
        assertEquals("\"a\\\"b\\\\c\\n\\t\\x01é\"", Lines.quote("a\"b\\c\n\t\u0001é"));
    }

    private static String[] prepend(List<String> words, String... first) {
        String[] all = new String[first.length + words.size()];
        System.arraycopy(first, 0, all, 0, first.length);
        for (int i = 0; i < words.size(); i++) {
            all[first.length + i] = words.get(i);
        }
        return all;
    }
}
