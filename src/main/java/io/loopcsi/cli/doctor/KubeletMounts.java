package io.loopcsi.cli.doctor;

import java.util.ArrayList;
import java.util.List;

/**
 * In a pod: whether kubelet's directory is mounted from the host with Bidirectional propagation
 * (a shared mount), without which the mounts the node pod makes under it (staging and publish
 * targets) never reach kubelet and the application pods.
 */
final class KubeletMounts {

    static final String KUBELET_DIR = "/var/lib/kubelet";

    private KubeletMounts() {
    }

    /** Whether this process runs in a Kubernetes pod (kubelet sets this for every container). */
    static boolean inPod(java.util.Map<String, String> env) {
        return !env.getOrDefault("KUBERNETES_SERVICE_HOST", "").isEmpty();
    }

    /** The verdict from /proc/self/mountinfo's lines, for the mount that holds dir. */
    static Finding check(List<String> mountinfo, String dir) {
        String check = "kubelet mounts";
        String[] best = null;
        for (String line : mountinfo) {
            String[] f = line.split(" ");
            if (f.length < 7) {
                continue;
            }
            String mp = f[4].replace("\\040", " ");
            // the topmost (last) mount of the longest mount point that holds dir
            if ((dir.equals(mp) || dir.startsWith(mp.endsWith("/") ? mp : mp + "/"))
                    && (best == null || mp.length() >= best[4].replace("\\040", " ").length())) {
                best = f;
            }
        }
        if (best == null || !best[4].replace("\\040", " ").equals(dir)) {
            return Finding.fail(check, dir + " is not mounted from the host: kubelet never sees the volumes mounted here",
                    "mount the host's " + dir + " (hostPath) with mountPropagation: Bidirectional");
        }
        List<String> tags = new ArrayList<>();
        for (int i = 6; i < best.length && !best[i].equals("-"); i++) {
            tags.add(best[i]);
        }
        if (tags.stream().anyMatch(t -> t.startsWith("shared:"))) {
            return Finding.ok(check, dir + " is a shared mount (Bidirectional): mounts made here reach kubelet");
        }
        String mode = tags.stream().anyMatch(t -> t.startsWith("master:")) ? "a slave mount (HostToContainer)" : "a private mount (None)";
        return Finding.fail(check, dir + " is " + mode + ": the volumes mounted here stay invisible to kubelet and the pods",
                "mountPropagation: Bidirectional on the " + dir + " volume mount (needs privileged: true)");
    }
}
