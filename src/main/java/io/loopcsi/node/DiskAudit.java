package io.loopcsi.node;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.loopcsi.engine.PoolDirectory.PartialFetch;

/**
 * Both directions between the pool directory (the source of truth) and the hand-off objects of
 * this node. Pure: the caller gathers what is on disk and what the API holds.
 *
 * @param unclaimed IDs on disk that no object of this node names: kept, reported, never deleted
 * @param missing object names whose node made them but whose files are gone
 * @param abandoned fetches from another node (a partial image and its progress) into a volume that no
 *        object of this node names: an abandoned transfer, described with its files and sizes; the
 *        node deletes them once no LoopTransfer authorises the transfer either (NodeRole)
 */
record DiskAudit(List<String> unclaimed, List<String> missing, List<String> abandoned) {

    /** At most this many IDs are listed in the LoopPoolNode status; the count is always given. */
    static final int LISTED = 50;

    /**
     * @param onDisk volume and snapshot IDs committed in the pool directory
     * @param claimed IDs named by an object of this node (its name without the pool prefix)
     * @param made object names (with their IDs) whose status says the node made them
     */
    static DiskAudit of(Set<String> onDisk, Set<String> claimed, Collection<Made> made) {
        return of(onDisk, List.of(), claimed, made);
    }

    /**
     * @param fetches the destination fetches whose progress is in the pool directory
     *        ({@link io.loopcsi.engine.PoolDirectory#partialFetches})
     */
    static DiskAudit of(Set<String> onDisk, Collection<PartialFetch> fetches, Set<String> claimed, Collection<Made> made) {
        List<String> unclaimed = new ArrayList<>();
        for (String id : new TreeSet<>(onDisk)) {
            if (!claimed.contains(id)) {
                unclaimed.add(id);
            }
        }
        List<String> missing = new ArrayList<>();
        for (Made m : made) {
            if (!onDisk.contains(m.id())) {
                missing.add(m.objectName());
            }
        }
        missing.sort(null);
        List<String> abandoned = new ArrayList<>();
        for (PartialFetch f : fetches) {
            if (!claimed.contains(f.volumeId())) {
                abandoned.add(f.describe());
            }
        }
        abandoned.sort(null);
        return new DiskAudit(unclaimed, missing, abandoned);
    }

    record Made(String objectName, String id) {
    }

    List<String> listedUnclaimed() {
        return unclaimed.size() <= LISTED ? unclaimed : unclaimed.subList(0, LISTED);
    }

    List<String> listedMissing() {
        return missing.size() <= LISTED ? missing : missing.subList(0, LISTED);
    }

    List<String> listedAbandoned() {
        return abandoned.size() <= LISTED ? abandoned : abandoned.subList(0, LISTED);
    }

    boolean isEmpty() {
        return unclaimed.isEmpty() && missing.isEmpty() && abandoned.isEmpty();
    }

    String summary() {
        if (isEmpty()) {
            return "every volume and snapshot on disk has its object, every object its files";
        }
        List<String> parts = new ArrayList<>();
        if (!unclaimed.isEmpty()) {
            parts.add(unclaimed.size() + " on disk without an object (kept; delete the files by hand if they are not wanted): "
                    + String.join(", ", listedUnclaimed()) + (unclaimed.size() > LISTED ? ", ..." : ""));
        }
        if (!missing.isEmpty()) {
            parts.add(missing.size() + " object(s) whose files are gone: " + String.join(", ", listedMissing())
                    + (missing.size() > LISTED ? ", ..." : ""));
        }
        if (!abandoned.isEmpty()) {
            parts.add(abandoned.size() + " abandoned transfer(s), a fetch into a volume no object names (deleted once no LoopTransfer "
                    + "authorises it): " + String.join(", ", listedAbandoned()) + (abandoned.size() > LISTED ? ", ..." : ""));
        }
        return String.join("; ", parts);
    }
}
