package io.loopcsi.cli.evacuate;

import java.util.List;

/**
 * One line of the plan: a volume on the node being evacuated and what happens to it. A move has a
 * target node; an item that cannot move has the reason instead and is left untouched.
 *
 * @param pool the StoragePool of the volume
 * @param volumeId the volume's CSI ID (its PV's volumeHandle)
 * @param oldPv the PersistentVolume naming it (null when none does)
 * @param claim namespace/name of the claim bound to it (null when none is)
 * @param bytes the volume's size
 * @param kind "block" or the filesystem type
 * @param target the node it moves to (null when it does not move)
 * @param newPv the PersistentVolume (and CSI request name) of the copy
 * @param usedBy pods (namespace/name) that use the claim now: they must stop before it moves
 * @param resume the step a run that stopped had reached (null for a new move; {@link MoveRecord})
 * @param reason why it cannot move (null when it can)
 * @param snapshotsLeft the volume's snapshots, which stay on the node evacuated (an evacuation moves
 *        volumes, not snapshots): each as "VolumeSnapshot ns/name (snap-...)", or the ID alone
 *        when no VolumeSnapshotContent names it
 */
public record Move(String pool, String volumeId, String oldPv, String claim, long bytes, String kind, String target, String newPv,
        List<String> usedBy, String resume, String reason, List<String> snapshotsLeft) {

    public Move {
        usedBy = List.copyOf(usedBy);
        snapshotsLeft = List.copyOf(snapshotsLeft);
    }

    Move(String pool, String volumeId, String oldPv, String claim, long bytes, String kind, String target, String newPv, List<String> usedBy,
            String resume, String reason) {
        this(pool, volumeId, oldPv, claim, bytes, kind, target, newPv, usedBy, resume, reason, List.of());
    }

    Move withSnapshotsLeft(List<String> snapshots) {
        return new Move(pool, volumeId, oldPv, claim, bytes, kind, target, newPv, usedBy, resume, reason, snapshots);
    }

    static Move cannot(String pool, String volumeId, String oldPv, String claim, long bytes, String kind, String reason) {
        return new Move(pool, volumeId, oldPv, claim, bytes, kind, null, null, List.of(), null, reason);
    }

    public boolean movable() {
        return reason == null;
    }

    /** What the plan says is done with it. */
    public String action(boolean keepSource) {
        if (!movable()) {
            return "cannot move: " + reason;
        }
        if (MoveRecord.KEPT.equals(resume)) {
            return keepSource ? "moved already; the source is kept (--keep-source)" : "moved already; delete the kept source";
        }
        String a = resume != null ? "continue the move (stopped at step " + resume + ")" : "move";
        if (!usedBy.isEmpty()) {
            a += " once its pods stop (or --evict): " + String.join(", ", usedBy);
        }
        return a;
    }
}
