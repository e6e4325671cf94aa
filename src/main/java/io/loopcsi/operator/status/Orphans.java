package io.loopcsi.operator.status;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.handoff.LoopPoolNodeStatus;
import io.loopcsi.operator.api.NodeOrphans;

/**
 * Orphans both ways, per node, from the nodes' own disk audits (LoopPoolNode status: node/DiskAudit):
 * image files no object names, objects whose files are gone, and abandoned transfers (a fetch's partial
 * image into a volume no object names). Pure. Nothing is ever deleted because of them: the pool's
 * status, a gauge and an alert say so, and an admin decides (only an abandoned transfer's files, which
 * are no user data, go by themselves: the node deletes them once no LoopTransfer authorises it).
 */
public final class Orphans {

    /** At most this many IDs per node and kind in the pool's status (the counts are always whole). */
    static final int LISTED = 10;

    private Orphans() {
    }

    /** The nodes with orphans, by node name; a node's last report counts, fresh or not. */
    public static List<NodeOrphans> of(Collection<LoopPoolNode> reports) {
        List<NodeOrphans> out = new ArrayList<>();
        for (LoopPoolNode r : reports) {
            LoopPoolNodeStatus s = r.getStatus();
            if (s == null || r.getSpec() == null) {
                continue;
            }
            List<String> unclaimed = s.getUnclaimed() == null ? List.of() : s.getUnclaimed();
            List<String> missing = s.getMissing() == null ? List.of() : s.getMissing();
            int u = Math.max(unclaimed.size(), s.getUnclaimedCount() == null ? 0 : s.getUnclaimedCount());
            int m = Math.max(missing.size(), s.getMissingCount() == null ? 0 : s.getMissingCount());
            List<String> abandoned = s.getAbandonedTransfers() == null ? List.of() : s.getAbandonedTransfers();
            int a = Math.max(abandoned.size(), s.getAbandonedTransferCount() == null ? 0 : s.getAbandonedTransferCount());
            if (u + m + a > 0) {
                out.add(new NodeOrphans(r.getSpec().getNode(), u, m, first(unclaimed), first(missing), a, first(abandoned)));
            }
        }
        out.sort(Comparator.comparing(NodeOrphans::getNode));
        return out;
    }

    private static List<String> first(List<String> ids) {
        return List.copyOf(ids.size() <= LISTED ? ids : ids.subList(0, LISTED));
    }
}
