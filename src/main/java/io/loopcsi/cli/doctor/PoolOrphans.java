package io.loopcsi.cli.doctor;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.loopcsi.engine.Ids;
import io.loopcsi.engine.OrphanList;

/**
 * Orphans in a pool directory, from the node role's last audit there ({@link OrphanList}): doctor
 * lists them, and {@link #remove} deletes one unclaimed image on purpose. Nothing else ever deletes
 * them: an image no object names may still be someone's data (an object deleted by hand, a pool
 * directory restored from a backup). Abandoned transfers (a fetch's partial image and progress) are
 * listed too; they are no one's data, and the node deletes them itself (node/AbandonedFetches).
 */
final class PoolOrphans {

    static final String CHECK = "orphans";

    private PoolOrphans() {
    }

    /** A line for doctor: skip without an audit (a standalone pool or a node that never ran), ok, or warn naming them. */
    static Finding finding(Path dataDir) {
        Optional<OrphanList> list;
        try {
            list = Files.isDirectory(dataDir) ? OrphanList.read(dataDir) : Optional.empty();
        } catch (IOException e) {
            return Finding.warn(CHECK, "cannot read " + dataDir.resolve(OrphanList.FILE) + ": " + e.getMessage(), "check the file's owner and mode");
        }
        if (list.isEmpty()) {
            return Finding.skip(CHECK, "no disk audit in " + dataDir + " (the node role writes one; a standalone pool has none)");
        }
        OrphanList l = list.get();
        if (l.isEmpty()) {
            return Finding.ok(CHECK, "none (node " + l.node() + "'s audit of pool " + l.pool() + " since " + l.since() + ")");
        }
        List<String> parts = new ArrayList<>();
        if (!l.unclaimed().isEmpty()) {
            parts.add(l.unclaimed().size() + " unclaimed (files no object names): " + String.join(", ", l.unclaimed()));
        }
        if (!l.missing().isEmpty()) {
            parts.add(l.missing().size() + " missing (objects whose files are gone): " + String.join(", ", l.missing()));
        }
        if (!l.abandonedTransfers().isEmpty()) {
            parts.add(l.abandonedTransfers().size() + " abandoned transfer(s) (a fetch into a volume no LoopVolume names): "
                    + String.join(", ", l.abandonedTransfers()));
        }
        List<String> hints = new ArrayList<>();
        if (!l.unclaimed().isEmpty()) {
            hints.add("kept on purpose; loopcsi doctor --data-dir " + dataDir + " --remove-orphan ID deletes an unclaimed image");
        }
        if (!l.missing().isEmpty()) {
            hints.add("a missing volume's data is lost: delete its claim or VolumeSnapshot");
        }
        if (!l.abandonedTransfers().isEmpty()) {
            hints.add("an abandoned transfer is no user data (its source holds the content): the node deletes it once no LoopTransfer"
                    + " authorises the transfer (kubectl get looptransfers); until then a CreateVolume asked again goes on with it");
        }
        return Finding.warn(CHECK, String.join("; ", parts) + " (node " + l.node() + "'s audit of pool " + l.pool() + " since " + l.since() + ")",
                String.join("; ", hints));
    }

    /**
     * Deletes the files of one unclaimed volume or snapshot: only one the audit lists as unclaimed, and
     * not while a loop device is attached to its image. Prints what it did or why not; the exit status.
     */
    static int remove(Path dataDir, String id, PrintStream out) throws IOException {
        Optional<OrphanList> list = OrphanList.read(dataDir);
        if (list.isEmpty() || !list.get().unclaimed().contains(id)) {
            out.println("loopcsi: " + id + " is not listed as unclaimed in " + dataDir.resolve(OrphanList.FILE)
                    + " (loopcsi doctor --data-dir " + dataDir + " lists the orphans); nothing removed");
            return 1;
        }
        Path dir = dataDir.resolve(Ids.isSnapshotId(id) ? "snapshots" : "volumes");
        Path image = dir.resolve(id + ".img");
        Optional<String> device = attached(image);
        if (device.isPresent()) {
            out.println("loopcsi: " + image + " is attached to " + device.get() + " (in use); nothing removed");
            return 1;
        }
        List<String> removed = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, id + ".*")) {
            for (Path f : files) {
                Files.delete(f);
                removed.add(f.toString());
            }
        }
        out.println(removed.isEmpty() ? "loopcsi: no files of " + id + " left in " + dir + "; nothing removed"
                : "removed " + String.join(", ", removed));
        return 0;
    }

    /** A loop device whose backing file is this image (by name: a device attached in another mount namespace counts too). */
    static Optional<String> attached(Path image) throws IOException {
        Path sys = Path.of("/sys/block");
        if (!Files.isDirectory(sys)) {
            return Optional.empty();
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(sys, "loop*")) {
            for (Path dev : ds) {
                Path backing = dev.resolve("loop/backing_file");
                if (Files.isReadable(backing) && Files.readString(backing).strip().endsWith("/" + image.getFileName())) {
                    return Optional.of("/dev/" + dev.getFileName());
                }
            }
        }
        return Optional.empty();
    }
}
