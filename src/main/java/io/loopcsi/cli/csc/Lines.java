package io.loopcsi.cli.csc;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

import com.google.protobuf.Timestamp;

import csi.v1.ControllerGetVolumeResponse;
import csi.v1.GetPluginInfoResponse;
import csi.v1.NodeGetInfoResponse;
import csi.v1.Snapshot;
import csi.v1.VolumeGroupSnapshot;
import csi.v1.Volume;
import csi.v1.VolumeCondition;
import csi.v1.VolumeUsage;

/**
 * csc's text output: one tab-separated line per result, strings that may hold anything quoted
 * as Go's {@code %q} quotes them, maps as {@code "key"="value"} fields in key order. Every method
 * returns complete lines (each ending in a newline).
 */
final class Lines {

    private Lines() {
    }

    /** {@code "<id>"<TAB><capacity_bytes>[<TAB>"k"="v"...]} — create-volume, list-volumes. */
    static String volume(Volume v) {
        return volumeFields(v) + "\n";
    }

    /** The volume line, then {@code <TAB>abnormal=<bool>[<TAB>message="..."]} when the driver reports a condition. */
    static String volumeWithStatus(ControllerGetVolumeResponse r) {
        String condition = r.getStatus().hasVolumeCondition() ? condition(r.getStatus().getVolumeCondition()) : "";
        return volumeFields(r.getVolume()) + condition + "\n";
    }

    private static String volumeFields(Volume v) {
        return quote(v.getVolumeId()) + "\t" + v.getCapacityBytes() + pairs(v.getVolumeContextMap());
    }

    /** {@code "<id>"<TAB><size_bytes><TAB><source_volume_id><TAB><creation_time RFC 3339><TAB><ready_to_use>}. */
    static String snapshot(Snapshot s) {
        return quote(s.getSnapshotId()) + "\t" + s.getSizeBytes() + "\t" + s.getSourceVolumeId() + "\t"
                + time(s.getCreationTime()) + "\t" + s.getReadyToUse() + "\n";
    }

    /** The group's line ({@code "<id>"<TAB><creation_time><TAB><ready_to_use>}), then a snapshot line per member. */
    static String groupSnapshot(VolumeGroupSnapshot g) {
        StringBuilder b = new StringBuilder(quote(g.getGroupSnapshotId())).append('\t').append(time(g.getCreationTime())).append('\t')
                .append(g.getReadyToUse()).append('\n');
        g.getSnapshotsList().forEach(s -> b.append(snapshot(s)));
        return b.toString();
    }

    /** {@code token="<next_token>"} after a page that has more. */
    static String token(String nextToken) {
        return nextToken.isEmpty() ? "" : "token=" + quote(nextToken) + "\n";
    }

    /** {@code "<name>"<TAB>"<vendor_version>"[<TAB>"k"="v"...]} (manifest). */
    static String pluginInfo(GetPluginInfoResponse r) {
        return quote(r.getName()) + "\t" + quote(r.getVendorVersion()) + pairs(r.getManifestMap()) + "\n";
    }

    /** {@code <node_id><TAB><max_volumes_per_node>[<TAB>"segment"="value"...]} (accessible topology). */
    static String nodeInfo(NodeGetInfoResponse r) {
        return r.getNodeId() + "\t" + r.getMaxVolumesPerNode() + pairs(r.getAccessibleTopology().getSegmentsMap()) + "\n";
    }

    /** {@code <volume_id><TAB><volume_path><TAB><available><TAB><total><TAB><used><TAB><unit>}, one line per usage entry. */
    static String usage(String volumeId, String volumePath, VolumeUsage u) {
        return volumeId + "\t" + volumePath + "\t" + u.getAvailable() + "\t" + u.getTotal() + "\t" + u.getUsed() + "\t" + u.getUnit() + "\n";
    }

    /** {@code "<volume_id>"<TAB>true}, or {@code "<volume_id>"<TAB>false[<TAB>"<message>"]}. */
    static String validation(String volumeId, boolean confirmed, String message) {
        return quote(volumeId) + "\t" + confirmed + (message.isEmpty() ? "" : "\t" + quote(message)) + "\n";
    }

    private static String condition(VolumeCondition c) {
        return "\tabnormal=" + c.getAbnormal() + (c.getMessage().isEmpty() ? "" : "\tmessage=" + quote(c.getMessage()));
    }

    private static String pairs(Map<String, String> map) {
        StringBuilder b = new StringBuilder();
        new TreeMap<>(map).forEach((k, v) -> b.append('\t').append(quote(k)).append('=').append(quote(v)));
        return b.toString();
    }

    private static String time(Timestamp t) {
        return Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString();
    }

    /** Go's {@code %q}: double quotes, backslash escapes for quotes, backslashes and control characters. */
    static String quote(String s) {
        return "\"" + quoteBody(s) + "\"";
    }

    private static String quoteBody(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                case '\r' -> b.append("\\r");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        b.append(String.format("\\x%02x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
