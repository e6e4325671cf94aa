package io.loopcsi.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.loopcsi.engine.EngineException;

/**
 * Where a group snapshot is made: on the one node holding every source volume. Node-local
 * volumes can be frozen together only on one host (fsfreeze of every mounted member, then the
 * copies, then the thaw), so members on several nodes are refused before anything is written.
 */
final class GroupPlacement {

    /** A source volume as the API server has it: its node, or null when it does not exist (or was never made). */
    record Source(String volumeId, String node, boolean deleting) {
    }

    private GroupPlacement() {
    }

    /**
     * The node of every source. NOT_FOUND names the volumes that do not exist; FAILED_PRECONDITION
     * those being deleted, or every volume with its node when they are on several nodes: the CSI
     * spec's error table of CreateVolumeGroupSnapshot has FAILED_PRECONDITION for "cannot snapshot
     * multiple volumes together" (the volumes are not set up the way the plugin needs: fix their
     * placement, then retry), whereas INVALID_ARGUMENT is for a malformed request, which this is not.
     */
    static String node(List<Source> sources) {
        List<String> missing = sources.stream().filter(s -> s.node() == null).map(Source::volumeId).toList();
        if (!missing.isEmpty()) {
            throw EngineException.notFound("source_volume_ids: " + String.join(", ", missing) + (missing.size() == 1 ? " does" : " do")
                    + " not exist");
        }
        List<String> deleting = sources.stream().filter(Source::deleting).map(Source::volumeId).toList();
        if (!deleting.isEmpty()) {
            throw EngineException.precondition("source_volume_ids: " + String.join(", ", deleting) + (deleting.size() == 1 ? " is" : " are")
                    + " being deleted");
        }
        Map<String, List<String>> byNode = new TreeMap<>();
        for (Source s : sources) {
            byNode.computeIfAbsent(s.node(), n -> new ArrayList<>()).add(s.volumeId());
        }
        if (byNode.size() > 1) {
            List<String> where = new ArrayList<>();
            byNode.forEach((n, vols) -> where.add(String.join(", ", vols) + " on node " + n));
            throw EngineException.precondition("source_volume_ids: the volumes live on " + byNode.size() + " nodes (" + String.join("; ", where)
                    + "); node-local volumes can be snapshotted together only on one node, where they are frozen at one instant; "
                    + "nothing was created");
        }
        return byNode.keySet().iterator().next();
    }
}
