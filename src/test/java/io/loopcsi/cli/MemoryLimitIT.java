package io.loopcsi.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import csi.v1.CapacityRange;
import csi.v1.CreateVolumeRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.GetCapacityRequest;
import csi.v1.ListVolumesRequest;
import csi.v1.ListVolumesResponse;
import csi.v1.ProbeRequest;
import csi.v1.VolumeCapability;
import io.grpc.StatusRuntimeException;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.Runtimes;

/**
 * The driver at the node container's default memory limit (operator/desired/ContainerResources)
 * under a real memory cgroup on this machine: started by the launcher inside the cgroup (which reads
 * the cgroup's limit and sizes the heap from it, as in a pod), it serves 1000 volumes kept in its
 * pool and a churn of create+delete pairs, lists them all, and is never OOM-killed. The cgroup is a
 * child of this test's own memory cgroup (cgroup v1, the hierarchy kube-testenv's kubelet uses
 * here), removed afterwards. Skipped where no v1 memory cgroup can be made (not root, cgroup v2 only).
 */
class MemoryLimitIT {

    /**
     * The node's default limit for the runtime under test (ContainerResources: 128Mi native, 256Mi JVM);
     * -Dloopcsi.memory-it.limit-mib=64 (native) or 160 (JVM) tries its minimum.
     */
    static final long LIMIT = Long.getLong("loopcsi.memory-it.limit-mib", Runtimes.isNative() ? 128 : 256) << 20;
    static final int VOLUMES = Integer.getInteger("loopcsi.memory-it.volumes", 1000);
    static final int CHURN = 200;

    @TempDir
    Path dir;

    @Test
    void theDriverServesAThousandVolumesAndChurnAtTheNodesDefaultLimit() throws Exception {
        Path cgroup = childCgroup();
        assumeTrue(cgroup != null, "no writable cgroup v1 memory hierarchy here");
        Files.writeString(cgroup.resolve("memory.limit_in_bytes"), Long.toString(LIMIT));
        Path socket = dir.resolve("csi.sock");
        Path log = dir.resolve("driver.log");
        // the shell joins the cgroup, then becomes the launcher, which becomes the JVM: one process, limited from its start
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "echo $$ > \"$0\" && exec bash \"$@\"", cgroup.resolve("cgroup.procs").toString(),
                Path.of("loopcsi").toAbsolutePath().toString(), "standalone", "--endpoint", "unix://" + socket, "--data-dir",
                dir.resolve("pool").toString(), "--capacity", "2000Gi", "--node-id", "limited", "--allowed-roots", dir.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("LOOPCSI_CDS", "off");
        pb.environment().remove("LOOPCSI_MEMORY_LIMIT");
        pb.environment().remove("JAVA_OPTS");
        Process p = pb.start();
        try {
            awaitProbe(p, socket, log);
            String cmdline = Files.readString(Path.of("/proc/" + p.pid() + "/cmdline")).replace('\0', ' ');
            String heap = Runtimes.isNative() ? "-Xmx" + (LIMIT / 4 * 3 >> 20) + "m" : "-Xmx" + ((LIMIT >> 20) - 112) + "m";
            assertTrue(cmdline.contains(heap), "the launcher sized the heap from the cgroup's limit (" + heap + "): " + cmdline);
            List<String> kept = new ArrayList<>();
            try (CsiClient c = new CsiClient(socket)) {
                for (int i = 0; i < VOLUMES; i++) {
                    kept.add(c.controller.createVolume(block("kept-" + i)).getVolume().getVolumeId());
                }
                for (int i = 0; i < CHURN; i++) {
                    String id = c.controller.createVolume(block("churn-" + i)).getVolume().getVolumeId();
                    c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                }
                int listed = 0;
                String token = "";
                do {
                    ListVolumesResponse r = c.controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(100).setStartingToken(token).build());
                    listed += r.getEntriesCount();
                    token = r.getNextToken();
                } while (!token.isEmpty());
                assertEquals(VOLUMES, listed);
                assertEquals(VOLUMES, c.controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount());
                c.controller.getCapacity(GetCapacityRequest.getDefaultInstance());
                assertTrue(p.isAlive(), "the driver is alive");
                long rss = vmRssKib(p.pid());
                long peak = Long.parseLong(Files.readString(cgroup.resolve("memory.max_usage_in_bytes")).trim());
                System.out.printf("MemoryLimitIT: %d volumes kept, %d pairs: VmRSS %d MiB, cgroup peak %d MiB of %d MiB%n", VOLUMES, CHURN,
                        rss >> 10, peak >> 20, LIMIT >> 20);
                for (String id : kept) {
                    c.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                }
            }
            assertTrue(p.isAlive(), "the driver is alive after deleting them");
            assertEquals("0", oomKills(cgroup), "no OOM kill in the cgroup");
        } finally {
            p.destroy();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(cgroup);
        }
    }

    static CreateVolumeRequest block(String name) {
        return CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20))
                .addVolumeCapabilities(VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)))
                .build();
    }

    /** A new child of this process's v1 memory cgroup, or null where none can be made. */
    static Path childCgroup() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
                String[] f = line.split(":", 3);
                if (f.length == 3 && List.of(f[1].split(",")).contains("memory")) {
                    Path child = Path.of("/sys/fs/cgroup/memory" + f[2], "loopcsi-memory-it-" + ProcessHandle.current().pid());
                    Files.createDirectory(child);
                    return Files.exists(child.resolve("memory.limit_in_bytes")) ? child : null;
                }
            }
        } catch (Exception e) {
            return null;
        }
        return null;
    }

    /** The cgroup's oom_kill count (memory.oom_control, kernels since 4.13). */
    static String oomKills(Path cgroup) throws Exception {
        for (String line : Files.readAllLines(cgroup.resolve("memory.oom_control"))) {
            if (line.startsWith("oom_kill ")) {
                return line.substring("oom_kill ".length()).trim();
            }
        }
        throw new AssertionError("no oom_kill in memory.oom_control");
    }

    static long vmRssKib(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    static void awaitProbe(Process p, Path socket, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (System.nanoTime() < deadline) {
            assertTrue(p.isAlive(), () -> "driver exited: " + readLog(log));
            if (Files.exists(socket)) {
                try (CsiClient c = new CsiClient(socket)) {
                    if (c.identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue()) {
                        return;
                    }
                } catch (StatusRuntimeException notYet) {
                    // not serving yet
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("driver not ready: " + readLog(log));
    }

    static String readLog(Path log) {
        try {
            return Files.readString(log);
        } catch (Exception e) {
            return "(no log)";
        }
    }
}
