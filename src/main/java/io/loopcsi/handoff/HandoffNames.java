package io.loopcsi.handoff;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Names and labels of the hand-off objects. A LoopVolume is {@code <pool>.<volume ID>}, a
 * LoopSnapshot {@code <pool>.<snapshot ID>}, a LoopGroupSnapshot {@code <pool>.<group snapshot ID>},
 * a LoopPoolNode {@code <pool>.<node>}: the IDs are
 * derived from the CSI request names (engine.Ids), so a retried call finds its object, and the
 * pool prefix keeps two pools apart. Labels let each node watch only its own objects.
 */
public final class HandoffNames {

    public static final String GROUP = "loopcsi.io";
    public static final String VERSION = "v1alpha1";
    public static final String POOL_LABEL = "loopcsi.io/pool";
    public static final String NODE_LABEL = "loopcsi.io/node";
    /** The node's finalizer: the object goes only after the node deleted the files behind it. */
    public static final String FINALIZER = "loopcsi.io/node-files";

    private HandoffNames() {
    }

    public static String object(String pool, String id) {
        return pool + "." + id;
    }

    public static String poolNode(String pool, String node) {
        return pool + "." + node;
    }

    /** The CSI ID in an object name, or null when the name is not of this pool. */
    public static String idOf(String pool, String objectName) {
        String prefix = pool + ".";
        return objectName != null && objectName.startsWith(prefix) ? objectName.substring(prefix.length()) : null;
    }

    public static Map<String, String> labels(String pool, String node) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(POOL_LABEL, pool);
        l.put(NODE_LABEL, node);
        l.put("app.kubernetes.io/managed-by", "loopcsi");
        return l;
    }
}
