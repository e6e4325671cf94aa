package io.loopcsi.cli.csc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.google.protobuf.util.JsonFormat;

import csi.v1.CreateVolumeResponse;
import csi.v1.GetPluginInfoResponse;
import csi.v1.ListVolumesResponse;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Every csc verb against the standalone driver running in this JVM, through the same entry point
 * the launcher calls: exact output lines, JSON output, exit statuses and error messages.
 * Volumes, snapshots, mounts and loop devices a test makes are released after it, pass or fail.
 */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class CscAgainstDriverTest {

    static final long MI = 1L << 20;
    static final String XFS = "SINGLE_NODE_WRITER,mount,xfs";
    static final Pattern VOLUME_LINE = Pattern.compile("^\"(vol-[0-9a-f]+)\"\t(\\d+)$");
    static final Pattern SNAPSHOT_LINE = Pattern.compile(
            "^\"(snap-[0-9a-f]+)\"\t(\\d+)\t(vol-[0-9a-f]+)\t(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z)\ttrue$");
    static final String MISSING = "vol-00000000000000000000000000000000";

    Path mnt;
    final String prefix = "csc-" + Long.toHexString(System.nanoTime()) + "-";
    final List<String> volumes = new ArrayList<>();
    final List<String> snapshots = new ArrayList<>();
    /** Node calls to undo after the test, as csc argument lists, in order. */
    final List<String[]> undo = new ArrayList<>();

    @BeforeEach
    void makeMountDir() throws IOException {
        mnt = Files.createTempDirectory(StandaloneDriverResource.dir(), "csc-mnt-");
    }

    @AfterEach
    void releaseEverything() {
        for (int i = undo.size() - 1; i >= 0; i--) {
            csc(undo.get(i));
        }
        KernelCleanup.unmountUnder(mnt.toString());
        KernelCleanup.detachUnder(StandaloneDriverResource.dir().resolve("pool").toString());
        snapshots.forEach(s -> csc("controller", "delete-snapshot", s));
        volumes.forEach(v -> csc("controller", "delete-volume", v));
        KernelCleanup.deleteTree(mnt);
    }

    static CscRun csc(String... args) {
        String[] all = new String[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--endpoint";
        all[args.length + 1] = "unix://" + StandaloneDriverResource.socket();
        return CscRun.run(Map.of(), all);
    }

    static CscRun ok(String... args) {
        CscRun r = csc(args);
        assertEquals(0, r.status(), r::toString);
        assertEquals("", r.err(), r::toString);
        return r;
    }

    static void assertFails(int status, String code, String messagePart, CscRun r) {
        assertEquals(status, r.status(), r::toString);
        assertTrue(r.err().startsWith(code + ": "), r::toString);
        assertTrue(r.err().contains(messagePart), r::toString);
    }

    /** Runs create-volume and returns the new volume's ID, checking the line is csc's. */
    String create(String name, String cap, long bytes, String... more) {
        List<String> args = new ArrayList<>(List.of("controller", "create-volume", prefix + name, "--cap", cap, "--req-bytes",
                Long.toString(bytes)));
        args.addAll(List.of(more));
        CscRun r = ok(args.toArray(String[]::new));
        Matcher m = VOLUME_LINE.matcher(r.out().strip());
        assertTrue(m.matches(), r::toString);
        volumes.add(m.group(1));
        assertEquals(bytes, Long.parseLong(m.group(2)), r::toString);
        return m.group(1);
    }

    void stageAndPublish(String id, String cap, Path staging, Path target) {
        assertEquals(id + "\n", ok("node", "stage", id, "--staging-target-path", staging.toString(), "--cap", cap).out());
        undo.add(new String[] { "node", "unstage", id, "--staging-target-path", staging.toString() });
        assertEquals(id + "\n", ok("node", "publish", id, "--staging-target-path", staging.toString(), "--target-path",
                target.toString(), "--cap", cap).out());
        undo.add(new String[] { "node", "unpublish", id, "--target-path", target.toString() });
    }

    @Test
    void identityVerbs() {
        assertEquals("\"loopcsi.io\"\t\"0.1.0\"\n", ok("identity", "plugin-info").out());
        assertEquals("\"loopcsi.io\"\t\"0.1.0\"\n", ok("identity", "info").out());
        assertEquals("CONTROLLER_SERVICE\nVOLUME_ACCESSIBILITY_CONSTRAINTS\nONLINE\nGROUP_CONTROLLER_SERVICE\n", ok("identity", "plugin-capabilities").out());
        assertEquals("true\n", ok("identity", "probe").out());
    }

    @Test
    void capabilityInfoAndCapacityVerbs() {
        List<String> controller = ok("controller", "get-capabilities").lines();
        assertTrue(controller.containsAll(List.of("CREATE_DELETE_VOLUME", "LIST_VOLUMES", "GET_CAPACITY", "EXPAND_VOLUME",
                "CREATE_DELETE_SNAPSHOT", "LIST_SNAPSHOTS", "CLONE_VOLUME", "GET_VOLUME")), controller::toString);
        assertEquals(List.of("STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS", "EXPAND_VOLUME", "VOLUME_CONDITION", "SINGLE_NODE_MULTI_WRITER"),
                ok("node", "get-capabilities").lines());
        assertEquals("test-node\t0\t\"topology.loopcsi.io/node\"=\"test-node\"\n", ok("node", "get-info").out());
        String capacity = ok("controller", "get-capacity", "--cap", XFS).out();
        assertTrue(capacity.matches("\\d+\n") && Long.parseLong(capacity.strip()) > 0, capacity);
    }

    @Test
    void xfsVolumeThroughItsWholeLife() throws IOException {
        String id = create("xfs", XFS, 300 * MI, "--params", "purpose=test");
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("target");

        assertEquals("\"" + id + "\"\ttrue\n", ok("controller", "validate", id, "--cap", XFS).out());
        CscRun notBlock = ok("controller", "validate-volume-capabilities", id, "--cap", "1,block");
        assertTrue(notBlock.out().startsWith("\"" + id + "\"\tfalse\t\"volume_capabilities[0]: "), notBlock::toString);
        assertTrue(ok("controller", "get-volume", id).out().matches("\"" + id + "\"\t" + 300 * MI + "\tabnormal=false(\tmessage=\".*\")?\n"));
        assertTrue(ok("controller", "list-volumes").lines().contains("\"" + id + "\"\t" + 300 * MI));

        stageAndPublish(id, XFS, staging, target);
        Files.writeString(target.resolve("hello.txt"), "hello from csc\n");
        List<String> stats = ok("node", "stats", id + ":" + target).lines();
        assertEquals(2, stats.size(), stats::toString);
        assertTrue(stats.get(0).matches(id + "\t" + target + "\t\\d+\t\\d+\t\\d+\tBYTES"), stats::toString);
        assertTrue(stats.get(1).matches(id + "\t" + target + "\t\\d+\t\\d+\t\\d+\tINODES"), stats::toString);

        assertEquals(400 * MI + "\n", ok("controller", "expand-volume", id, "--req-bytes", "400Mi").out());
        String grown = ok("node", "expand", id, target.toString(), "--req-bytes", "400Mi").out();
        assertEquals(400 * MI + "\n", grown);
        String total = ok("node", "stats", id + ":" + target + ":" + staging).lines().get(0).split("\t")[3];
        assertTrue(Long.parseLong(total) > 300 * MI, total);

        // unstaging a published volume is refused, and the exit status is the gRPC code
        assertFails(9, "FAILED_PRECONDITION", "unpublish it first", csc("node", "unstage", id, "--staging-target-path", staging.toString()));
        assertEquals(id + "\n", ok("node", "unpublish", id, "--target-path", target.toString()).out());
        assertEquals(id + "\n", ok("node", "unstage", id, "--staging-target-path", staging.toString()).out());

        CscRun snap = ok("controller", "create-snapshot", prefix + "snap", "--source-volume", id);
        Matcher m = SNAPSHOT_LINE.matcher(snap.out().strip());
        assertTrue(m.matches(), snap::toString);
        String snapshot = m.group(1);
        snapshots.add(snapshot);
        assertEquals(id, m.group(3));
        assertEquals(List.of(snap.out().strip()), ok("controller", "list-snapshots", "--source-volume", id).lines());
        assertEquals(List.of(snap.out().strip()), ok("controller", "snapshots", "--snapshot-id", snapshot).lines());

        String clone = create("clone", XFS, 400 * MI, "--source-snapshot", snapshot);
        Path cloneStaging = mnt.resolve("clone-staging");
        Path cloneTarget = mnt.resolve("clone-target");
        stageAndPublish(clone, XFS, cloneStaging, cloneTarget);
        assertEquals("hello from csc\n", Files.readString(cloneTarget.resolve("hello.txt")));
        ok("node", "unpublish", clone, "--target-path", cloneTarget.toString());
        ok("node", "unstage", clone, "--staging-target-path", cloneStaging.toString());

        assertEquals(snapshot + "\n", ok("controller", "delete-snapshot", snapshot).out());
        assertEquals(id + "\n" + clone + "\n", ok("controller", "rm", id, clone).out());
        assertFails(5, "NOT_FOUND", id, csc("controller", "get-volume", id));
    }

    /** What du counts for a file: its blocks on disk. */
    static long allocatedBytes(Path file) throws Exception {
        Process p = new ProcessBuilder("stat", "--format=%b %B", file.toString()).redirectErrorStream(true).start();
        String[] f = new String(p.getInputStream().readAllBytes()).strip().split(" ");
        assertEquals(0, p.waitFor(), String.join(" ", f));
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }

    @Test
    void modifyVolumeAndGroupSnapshotVerbs() throws Exception {
        Path volumesDir = StandaloneDriverResource.dir().resolve("pool/volumes");
        String a = create("thick", "1,block", 8 * MI, "--mutable-params", "provisioning=thick");
        assertEquals(8 * MI, allocatedBytes(volumesDir.resolve(a + ".img")), "du of a thick image is its size");
        String b = create("thin", "1,block", 8 * MI);
        assertTrue(ok("controller", "get-capabilities").lines().contains("MODIFY_VOLUME"));
        assertEquals(b + "\n", ok("controller", "modify-volume", b, "--mutable-params", "provisioning=thick,directIO=off").out());
        assertEquals(8 * MI, allocatedBytes(volumesDir.resolve(b + ".img")));
        assertFails(3, "INVALID_ARGUMENT", "unknown key \"iops\"", csc("controller", "modify-volume", b, "--mutable-params", "iops=9"));

        io.loopcsi.testing.Data.writeAt(volumesDir.resolve(a + ".img"), 4096, "data of a".getBytes());
        io.loopcsi.testing.Data.writeAt(volumesDir.resolve(b + ".img"), 4096, "data of b".getBytes());
        assertEquals(List.of("CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT"), ok("group", "get-capabilities").lines());
        List<String> lines = ok("group", "create-snapshot", prefix + "group", "--source-volume", a, "--source-volume", b).lines();
        assertEquals(3, lines.size(), lines::toString);
        Matcher g = Pattern.compile("^\"(group-[0-9a-f]+)\"\t\\S+\ttrue$").matcher(lines.get(0));
        assertTrue(g.matches(), lines::toString);
        List<String> members = new ArrayList<>();
        for (String line : lines.subList(1, 3)) {
            Matcher m = SNAPSHOT_LINE.matcher(line);
            assertTrue(m.matches(), line);
            members.add(m.group(1));
            String restored = create("restore-" + m.group(3), "1,block", 8 * MI, "--source-snapshot", m.group(1));
            String want = m.group(3).equals(a) ? "data of a" : "data of b";
            assertEquals(want, new String(io.loopcsi.testing.Data.readAt(volumesDir.resolve(restored + ".img"), 4096, want.length())));
        }
        assertEquals(lines, ok("group", "get-snapshot", g.group(1), "--snapshot-id", members.get(1), "--snapshot-id", members.get(0))
                .lines());
        assertFails(9, "FAILED_PRECONDITION", "member of group snapshot " + g.group(1), csc("controller", "delete-snapshot", members.get(0)));
        assertEquals(g.group(1) + "\n", ok("group", "delete-snapshot", g.group(1), "--snapshot-id", members.get(0), "--snapshot-id",
                members.get(1)).out());
        assertFails(5, "NOT_FOUND", g.group(1), csc("group", "get-snapshot", g.group(1), "--snapshot-id", members.get(0)));
    }

    @Test
    void blockVolumePublishedReadWriteThenReadOnly() {
        String id = create("block", "1,block", 16 * MI);
        Path staging = mnt.resolve("staging");
        Path target = mnt.resolve("dev");
        stageAndPublish(id, "SINGLE_NODE_WRITER,block", staging, target);
        assertTrue(Files.exists(target));
        assertEquals(id + "\n", ok("node", "umount", id, "--target-path", target.toString()).out());
        assertEquals(id + "\n", ok("node", "unstage", id, "--staging-target-path", staging.toString()).out());

        // read-only: staged with a read-only access mode, published with --read-only
        Path roStaging = mnt.resolve("ro-staging");
        Path roTarget = mnt.resolve("ro-dev");
        assertEquals(id + "\n", ok("node", "stage", id, "--staging-target-path", roStaging.toString(), "--cap", "2,block").out());
        undo.add(new String[] { "node", "unstage", id, "--staging-target-path", roStaging.toString() });
        assertEquals(id + "\n", ok("node", "mount", id, "--staging-target-path", roStaging.toString(), "--target-path",
                roTarget.toString(), "--cap", "SINGLE_NODE_READER_ONLY,block", "--read-only").out());
        undo.add(new String[] { "node", "unpublish", id, "--target-path", roTarget.toString() });
        assertFalse(mountOptions(roTarget).isEmpty(), "nothing mounted at " + roTarget);
    }

    @Test
    void severalNamesOneLineEachAndListingPages() {
        CscRun r = ok("controller", "new", prefix + "p1", prefix + "p2", prefix + "p3", "--cap", "1,block", "--req-bytes", "1Mi");
        List<String> ids = new ArrayList<>();
        for (String line : r.lines()) {
            Matcher m = VOLUME_LINE.matcher(line);
            assertTrue(m.matches(), r::toString);
            ids.add(m.group(1));
        }
        volumes.addAll(ids);
        assertEquals(3, ids.size());

        CscRun first = ok("controller", "ls", "--max-entries", "1");
        assertEquals(2, first.lines().size(), first::toString);
        assertTrue(first.lines().get(1).matches("token=\".+\""), first::toString);
        String token = first.lines().get(1).substring("token=\"".length(), first.lines().get(1).length() - 1);
        CscRun second = ok("controller", "list-volumes", "--max-entries", "1", "--starting-token", token);
        assertFalse(second.lines().get(0).equals(first.lines().get(0)), second::toString);

        List<String> all = ok("controller", "list-volumes", "--max-entries", "1", "--paging").lines();
        assertTrue(all.stream().noneMatch(l -> l.startsWith("token=")), all::toString);
        for (String id : ids) {
            assertTrue(all.contains("\"" + id + "\"\t" + MI), all::toString);
        }
        assertEquals(ok("controller", "list-volumes").lines(), all);
    }

    @Test
    void jsonIsOneProtobufDocumentPerResponse() throws IOException {
        CscRun info = ok("identity", "plugin-info", "--format", "json");
        assertEquals("{\"name\":\"loopcsi.io\",\"vendorVersion\":\"0.1.0\"}\n", info.out());
        GetPluginInfoResponse.Builder parsed = GetPluginInfoResponse.newBuilder();
        JsonFormat.parser().merge(info.out(), parsed);
        assertEquals("loopcsi.io", parsed.getName());

        CscRun created = ok("controller", "new", prefix + "j1", prefix + "j2", "--cap", "1,block", "--req-bytes", "2Mi", "--format", "json");
        assertEquals(2, created.lines().size(), created::toString);
        for (String line : created.lines()) {
            CreateVolumeResponse.Builder b = CreateVolumeResponse.newBuilder();
            JsonFormat.parser().merge(line, b);
            volumes.add(b.getVolume().getVolumeId());
            assertEquals(2 * MI, b.getVolume().getCapacityBytes());
            assertEquals("test-node", b.getVolume().getAccessibleTopology(0).getSegmentsOrThrow("topology.loopcsi.io/node"));
        }
        ListVolumesResponse.Builder list = ListVolumesResponse.newBuilder();
        JsonFormat.parser().merge(ok("controller", "list-volumes", "--format", "json").out(), list);
        assertTrue(list.getEntriesList().stream().anyMatch(e -> e.getVolume().getVolumeId().equals(volumes.get(0))));
        assertEquals("{}\n", ok("controller", "delete-volume", volumes.get(0), "--format", "json").out());
    }

    @Test
    void failuresExitWithTheGrpcCodeAndSayWhyOnStderr() {
        CscRun missing = csc("controller", "get-volume", MISSING);
        assertFails(5, "NOT_FOUND", MISSING, missing);
        assertEquals("", missing.out());

        assertFails(3, "INVALID_ARGUMENT", "MULTI_NODE_MULTI_WRITER is not supported",
                csc("controller", "create", prefix + "mnmw", "--cap", "MULTI_NODE_MULTI_WRITER,mount,xfs"));
        assertFails(3, "INVALID_ARGUMENT", "staging_target_path", csc("node", "stage", MISSING, "--cap", XFS,
                "--staging-target-path", "relative/path"));
        assertFails(4, "DEADLINE_EXCEEDED", "deadline", csc("identity", "probe", "--timeout", "1ns"));

        // several arguments: results up to the first failure are printed, then it stops
        String id = create("first", "1,block", MI);
        CscRun partly = csc("controller", "get-volume", id, MISSING, id);
        assertFails(5, "NOT_FOUND", MISSING, partly);
        assertEquals(1, partly.lines().size(), partly::toString);
    }

    @Test
    void unreachableEndpointIsUnavailable() {
        CscRun r = CscRun.run("identity", "probe", "--endpoint", "unix://" + mnt.resolve("no.sock"));
        assertEquals(14, r.status(), r::toString);
        assertTrue(r.err().startsWith("UNAVAILABLE: "), r::toString);
        assertTrue(r.err().contains("unix://" + mnt.resolve("no.sock") + ": no such socket file"), r::toString);
        assertEquals("", r.out());
    }

    /** The per-mount options of the mount at p ("" when nothing is mounted there). */
    private static String mountOptions(Path p) {
        try {
            return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().map(l -> l.split(" "))
                    .filter(f -> f[4].equals(p.toString())).map(f -> f[5]).findFirst().orElse("");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
