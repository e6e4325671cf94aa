package io.loopcsi.operator.kube;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;

/**
 * A pod's container as a process on this machine, the way a kubelet would run it: the args and
 * env of the pod spec as the operator generated it (read back from the API server), with what a
 * container runtime does made explicit: {@code $(VAR)} expanded from the container's env (the
 * downward API's values given by the test), each mounted path mapped to where its volume lives
 * (a hostPath under this "node's" root directory, an emptyDir in the pod's directory) and each
 * pod's port on a port of its own (pods have their own network).
 */
record PodProcess(List<String> args, Map<String, String> env) {

    /**
     * @param fieldValues values of the downward API fields (e.g. spec.nodeName; status.podIP: the pod's IP, whose ports are mapped as well)
     * @param hostRoot where this "node's" host filesystem is (hostPath volumes land under it)
     * @param podDir the pod's own directory (emptyDir volumes)
     * @param ports the port each container port is reached at on this machine
     */
    static PodProcess of(PodSpec pod, String container, Map<String, String> fieldValues, Path hostRoot, Path podDir,
            Map<Integer, Integer> ports) {
        Container c = pod.getContainers().stream().filter(x -> x.getName().equals(container)).findFirst().orElseThrow();
        Map<String, String> env = new LinkedHashMap<>();
        for (EnvVar e : c.getEnv() == null ? List.<EnvVar>of() : c.getEnv()) {
            if (e.getValue() != null) {
                String x = e.getValue();
                for (var earlier : env.entrySet()) { // kubelet expands $(VAR) of a variable defined before
                    x = x.replace("$(" + earlier.getKey() + ")", earlier.getValue());
                }
                env.put(e.getName(), x);
            } else if (e.getValueFrom() != null && e.getValueFrom().getFieldRef() != null) {
                String path = e.getValueFrom().getFieldRef().getFieldPath();
                if (!fieldValues.containsKey(path)) {
                    throw new IllegalArgumentException("no value given for the downward API field " + path);
                }
                env.put(e.getName(), fieldValues.get(path));
            }
        }
        Map<String, Path> mounts = new HashMap<>();
        for (VolumeMount m : c.getVolumeMounts()) {
            Volume v = pod.getVolumes().stream().filter(x -> x.getName().equals(m.getName())).findFirst().orElseThrow();
            Path where;
            if (v.getHostPath() != null) {
                where = hostRoot.resolve(v.getHostPath().getPath().substring(1));
            } else if (v.getEmptyDir() != null || v.getProjected() != null) {
                where = podDir.resolve(v.getName()); // a projected volume's files are the test's to write there, as kubelet would
            } else {
                throw new IllegalArgumentException("volume " + v.getName() + ": only hostPath, emptyDir and projected are mapped");
            }
            mounts.put(m.getMountPath(), where);
        }
        String podIp = fieldValues.get("status.podIP");
        List<String> args = new ArrayList<>();
        for (String a : c.getArgs()) {
            String x = a;
            for (var e : env.entrySet()) {
                x = x.replace("$(" + e.getKey() + ")", e.getValue());
            }
            args.add(mapPorts(mapPaths(x, mounts), ports, podIp));
        }
        env.replaceAll((k, v) -> mapPorts(mapPaths(v, mounts), ports, podIp));
        return new PodProcess(args, env);
    }

    /** The pod's port P, bound on 0.0.0.0 or called on the pod's IP, is 127.0.0.1 and its own port here. */
    private static String mapPorts(String x, Map<Integer, Integer> ports, String podIp) {
        for (var p : ports.entrySet()) {
            x = x.replace("0.0.0.0:" + p.getKey(), "127.0.0.1:" + p.getValue());
            if (podIp != null) {
                x = x.replace(podIp + ":" + p.getKey(), "127.0.0.1:" + p.getValue());
            }
        }
        return x;
    }

    /** Replaces the longest mount path that prefixes a path in the argument (also after unix://). */
    private static String mapPaths(String arg, Map<String, Path> mounts) {
        String prefix = arg.startsWith("unix://") ? "unix://" : "";
        String path = arg.substring(prefix.length());
        if (!path.startsWith("/")) {
            return arg;
        }
        String best = null;
        for (String m : mounts.keySet()) {
            if ((path.equals(m) || path.startsWith(m + "/")) && (best == null || m.length() > best.length())) {
                best = m;
            }
        }
        if (best == null) {
            return arg;
        }
        String rest = path.substring(best.length());
        return prefix + mounts.get(best) + rest;
    }
}
