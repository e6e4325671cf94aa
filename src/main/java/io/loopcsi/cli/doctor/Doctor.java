package io.loopcsi.cli.doctor;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.loopcsi.cli.doctor.Finding.Verdict;

/**
 * {@code loopcsi doctor}: whether this machine can host a pool, one verdict per line with a fix for
 * each failure. Exit 0 when nothing failed (warnings name a cost, not a blocker), 1 otherwise.
 * Plain Java, run by the launcher before (instead of) Quarkus.
 */
public final class Doctor {

    private Doctor() {
    }

    /** Every check, in the order printed. */
    public static List<Finding> run(Path dataDir, long capacity, Map<String, String> env) {
        HostChecks host = HostChecks.ofThisProcess();
        List<Finding> out = new ArrayList<>();
        out.add(host.privileges());
        out.add(host.loopDevices());
        out.addAll(host.commands());
        try (DataDirChecks data = new DataDirChecks(dataDir, new io.loopcsi.engine.CommandRunner(java.time.Duration.ofSeconds(30)))) {
            out.add(data.filesystem());
            out.add(data.sparseFiles());
            out.add(data.reflinks());
            out.add(data.directIo());
            out.add(data.freeSpace(capacity));
            out.add(host.mkfsXfs(data.probeDir()));
        }
        out.add(PoolOrphans.finding(dataDir));
        if (KubeletMounts.inPod(env)) {
            try {
                out.add(KubeletMounts.check(Files.readAllLines(Path.of("/proc/self/mountinfo")), KubeletMounts.KUBELET_DIR));
            } catch (IOException e) {
                out.add(Finding.fail("kubelet mounts", "cannot read /proc/self/mountinfo: " + e.getMessage(), "run on Linux with /proc"));
            }
        } else {
            out.add(Finding.skip("kubelet mounts", "not in a pod"));
        }
        return out;
    }

    public static boolean ready(List<Finding> findings) {
        return findings.stream().noneMatch(f -> f.verdict() == Verdict.fail);
    }

    /** The table: CHECK, RESULT (upper case for a failure), DETAIL, and a fix line under each failure or warning. */
    public static String table(Path dataDir, List<Finding> findings) {
        int w = Math.max("CHECK".length(), findings.stream().mapToInt(f -> f.check().length()).max().orElse(0));
        StringBuilder sb = new StringBuilder();
        String row = "%-" + w + "s  %-6s %s%n";
        sb.append(String.format(row, "CHECK", "RESULT", "DETAIL"));
        for (Finding f : findings) {
            String v = f.verdict() == Verdict.fail ? "FAIL" : f.verdict().name();
            sb.append(String.format(row, f.check(), v, f.detail()));
            if (!f.fix().isEmpty()) {
                sb.append(String.format(row, "", "", "fix: " + f.fix()));
            }
        }
        long fails = findings.stream().filter(f -> f.verdict() == Verdict.fail).count();
        long warns = findings.stream().filter(f -> f.verdict() == Verdict.warn).count();
        sb.append(ready(findings) ? "\nverdict: this machine can host a pool in " + dataDir
                : "\nverdict: this machine cannot host a pool in " + dataDir + " (" + fails + " failed: "
                        + String.join(", ", findings.stream().filter(f -> f.verdict() == Verdict.fail).map(Finding::check).toList()) + ")");
        sb.append(warns > 0 ? "; " + warns + " warning(s)\n" : "\n");
        return sb.toString();
    }

    /** {"ready": bool, "dataDir": ..., "checks": [{"check","result","detail","fix"}...]}: for scripts. */
    public static String json(Path dataDir, List<Finding> findings) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("ready", ready(findings));
        doc.put("dataDir", dataDir.toString());
        List<Map<String, String>> checks = new ArrayList<>();
        for (Finding f : findings) {
            Map<String, String> c = new LinkedHashMap<>();
            c.put("check", f.check());
            c.put("result", f.verdict().name());
            c.put("detail", f.detail());
            c.put("fix", f.fix());
            checks.add(c);
        }
        doc.put("checks", checks);
        try {
            return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(doc) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code --remove-orphan ID}: deletes one image the node's audit lists as unclaimed; the exit status. */
    public static int removeOrphan(Path dataDir, String id, PrintStream out) {
        try {
            return PoolOrphans.remove(dataDir.toAbsolutePath().normalize(), id, out);
        } catch (IOException e) {
            out.println("loopcsi: cannot remove " + id + ": " + e.getMessage());
            return 1;
        }
    }

    /** Runs every check and prints the result in format (table or json); the exit status. */
    public static int main(Path dataDir, long capacity, String format, PrintStream out) {
        Path dir = dataDir.toAbsolutePath().normalize();
        List<Finding> findings = run(dir, capacity, System.getenv());
        out.print(format.equals("json") ? json(dir, findings) : table(dir, findings));
        out.flush();
        return ready(findings) ? 0 : 1;
    }
}
