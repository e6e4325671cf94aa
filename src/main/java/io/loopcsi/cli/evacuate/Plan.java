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
        return sb.toString();
    }
}
