package io.loopcsi.cli.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.loopcsi.cli.doctor.Finding.Verdict;

/** The verdicts doctor derives from what the kernel reports, and its two output formats. */
class DoctorTest {

    static final String KUBELET = "/var/lib/kubelet";

    @Test
    void privilegesComeFromTheEffectiveCapabilities() {
        assertEquals(Verdict.ok, HostChecks.privileges("Name:\tjava\nUid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n").verdict());
        Finding user = HostChecks.privileges("Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n");
        assertEquals(Verdict.fail, user.verdict());
        assertTrue(user.detail().startsWith("uid 1000 without CAP_SYS_ADMIN"), user.detail());
        assertTrue(user.fix().contains("privileged"), user.fix());
        // a container with CAP_SYS_ADMIN only (bit 21) is enough; Docker's default set (no bit 21) is not
        assertEquals(Verdict.ok, HostChecks.privileges("Uid:\t0\nCapEff:\t0000000000200000\n").verdict());
        assertEquals(Verdict.fail, HostChecks.privileges("Uid:\t0\nCapEff:\t00000000a80425fb\n").verdict());
    }

    @Test
    void kubeletsDirectoryMustBeASharedMountInAPod() {
        String root = "22 1 0:50 / / rw,relatime master:1 - overlay overlay rw";
        Finding shared = KubeletMounts.check(List.of(root, "30 22 8:1 /var/lib/kubelet /var/lib/kubelet rw,relatime shared:5 master:1 - ext4 /dev/sda1 rw"), KUBELET);
        assertEquals(Verdict.ok, shared.verdict(), shared.detail());
        Finding slave = KubeletMounts.check(List.of(root, "30 22 8:1 /var/lib/kubelet /var/lib/kubelet rw,relatime master:1 - ext4 /dev/sda1 rw"), KUBELET);
        assertEquals(Verdict.fail, slave.verdict());
        assertTrue(slave.detail().contains("HostToContainer") && slave.fix().contains("Bidirectional"), slave.detail());
        Finding priv = KubeletMounts.check(List.of(root, "30 22 8:1 /var/lib/kubelet /var/lib/kubelet rw - ext4 /dev/sda1 rw"), KUBELET);
        assertTrue(priv.detail().contains("private"), priv.detail());
        Finding none = KubeletMounts.check(List.of(root, "31 22 8:1 /var/lib/kubelet-other /var/lib/kubelet-other rw shared:5 - ext4 /dev/sda1 rw"), KUBELET);
        assertEquals(Verdict.fail, none.verdict());
        assertTrue(none.detail().contains("not mounted from the host"), none.detail());
        assertTrue(KubeletMounts.inPod(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1")));
        assertFalse(KubeletMounts.inPod(Map.of()));
    }

    @Test
    void freeSpaceBelowTheCapacityShrinksThePoolAndBelowOneXfsVolumeThereIsNone() {
        long gi = 1L << 30;
        assertEquals(Verdict.ok, DataDirChecks.freeSpace(100 * gi, 50 * gi).verdict());
        Finding less = DataDirChecks.freeSpace(10 * gi, 50 * gi);
        assertEquals(Verdict.warn, less.verdict());
        assertTrue(less.fix().contains("--capacity to 10.0 GiB"), less.fix());
        assertEquals(Verdict.fail, DataDirChecks.freeSpace(299L << 20, 50 * gi).verdict());
    }

    @Test
    void theTableHasAFixUnderEachProblemAndTheJsonIsForScripts() throws Exception {
        List<Finding> f = List.of(Finding.ok("privileges", "uid 0 with CAP_SYS_ADMIN"),
                Finding.fail("command mkfs.xfs", "not on PATH", "apt-get install xfsprogs"),
                Finding.warn("reflinks", "no reflinks here", "use xfs"), Finding.skip("kubelet mounts", "not in a pod"));
        String table = Doctor.table(Path.of("/pool"), f);
        List<String> lines = table.lines().toList();
        assertTrue(lines.get(0).matches("CHECK +RESULT DETAIL"), table);
        int fail = lines.indexOf(lines.stream().filter(l -> l.startsWith("command mkfs.xfs  FAIL   not on PATH")).findFirst().orElseThrow());
        assertTrue(lines.get(fail + 1).strip().equals("fix: apt-get install xfsprogs"), table);
        assertTrue(table.endsWith("verdict: this machine cannot host a pool in /pool (1 failed: command mkfs.xfs); 1 warning(s)\n"), table);
        assertFalse(Doctor.ready(f));

        JsonNode json = new ObjectMapper().readTree(Doctor.json(Path.of("/pool"), f));
        assertFalse(json.get("ready").asBoolean());
        assertEquals("/pool", json.get("dataDir").asText());
        assertEquals(4, json.get("checks").size());
        assertEquals("fail", json.get("checks").get(1).get("result").asText());
        assertEquals("apt-get install xfsprogs", json.get("checks").get(1).get("fix").asText());
        assertTrue(Doctor.ready(List.of(f.get(0), f.get(2), f.get(3))), "warnings do not fail");
    }
}
