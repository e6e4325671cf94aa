package io.loopcsi.cli.evacuate;

import java.util.List;

import io.loopcsi.engine.Sizes;

/** The plan of an evacuation of one node: an item per volume on it, in a stable order. */
public record Plan(String node, List<Move> moves) {

    public Plan {
        moves = List.copyOf(moves);
    }

    public List<Move> movable() {
        return moves.stream().filter(Move::movable).toList();
    }

    /** The table printed before anything is done (and alone in a dry run). */
    public String table(boolean keepSource) {
        StringBuilder sb = new StringBuilder();
        if (moves.isEmpty()) {
            return "no volume of a pool is on node " + node + "\n";
        }
        int wc = Math.max(5, moves.stream().mapToInt(m -> m.claim() == null ? 1 : m.claim().length()).max().orElse(0));
        int wv = Math.max(6, moves.stream().mapToInt(m -> m.volumeId().length() + m.pool().length() + 3).max().orElse(0));
        int wt = Math.max(2, moves.stream().mapToInt(m -> m.target() == null ? 1 : m.target().length()).max().orElse(0));
        String row = "%-" + wc + "s  %-" + wv + "s  %-8s %-6s %-" + wt + "s  %s%n";
        sb.append(String.format(row, "CLAIM", "VOLUME", "SIZE", "KIND", "TO", "ACTION"));
        for (Move m : moves) {
            sb.append(String.format(row, m.claim() == null ? "-" : m.claim(), m.volumeId() + " (" + m.pool() + ")", Sizes.format(m.bytes()),
                    m.kind(), m.target() == null ? "-" : m.target(), m.action(keepSource)));
        }
        long blocked = moves.stream().filter(m -> m.movable() && !m.usedBy().isEmpty()).count();
        sb.append(String.format("%d volume(s) on node %s: %d to move%s, %d cannot move%n", moves.size(), node, movable().size(),
                blocked > 0 ? " (" + blocked + " once their pods stop)" : "", moves.size() - movable().size()));
        sb.append(snapshotsLeft());
        return sb.toString();
    }

    /**
     * The snapshots that stay on the node, per volume, and how to take one along; empty when there
     * are none. Printed with the plan and again after the summary: retiring the node loses them.
     */
    public String snapshotsLeft() {
        List<Move> with = moves.stream().filter(m -> !m.snapshotsLeft().isEmpty()).toList();
        if (with.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder(String.format("snapshots that stay on node %s (an evacuation moves volumes, not snapshots):%n",
                node));
        for (Move m : with) {
            sb.append("  ").append(m.claim() == null ? "-" : m.claim()).append(" (").append(m.volumeId()).append("): ")
                    .append(String.join(", ", m.snapshotsLeft())).append('\n');
        }
        sb.append("  they restore on any node while node ").append(node).append(" serves; to keep one after it is retired, restore it to a "
                + "claim (made on another node), then snapshot that claim (docs/operations.md)\n");
        return sb.toString();
    }
}
