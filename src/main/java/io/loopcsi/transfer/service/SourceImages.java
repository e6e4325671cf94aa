package io.loopcsi.transfer.service;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import io.loopcsi.engine.Ids;
import io.loopcsi.engine.PoolDirectory;

/**
 * The image of a transfer's source on this node, by its ID: a snapshot's own image (a snapshot
 * does not change), and for a volume the point-in-time copy {@link VolumeCopies} makes for that
 * transfer (a volume may be in use while it is read). Empty for an ID of neither form or whose
 * image is not here (NOT_FOUND).
 */
public final class SourceImages {

    /** Point-in-time copies of volumes, one per transfer (the engine's, on a node). */
    public interface VolumeCopies {
        /** The copy of the volume for the transfer, made the first time; the same file after. */
        Path copyFor(String volumeId, String transferId);
    }

    private final PoolDirectory pool;
    private final VolumeCopies copies;

    /** Reads a volume's live image: only where nothing writes the volume while it is read (tests of the protocol). */
    public SourceImages(PoolDirectory pool) {
        this(pool, null);
    }

    public SourceImages(PoolDirectory pool, VolumeCopies copies) {
        this.pool = pool;
        this.copies = copies;
    }

    public Optional<Path> imageOf(String source, String transferId) {
        Path image;
        if (Ids.isVolumeId(source)) {
            image = pool.volumeImage(source);
            if (copies != null && Files.isRegularFile(image)) {
                return Optional.of(copies.copyFor(source, transferId));
            }
        } else if (Ids.isSnapshotId(source)) {
            image = pool.snapshotImage(source);
        } else {
            return Optional.empty();
        }
        return Files.isRegularFile(image) ? Optional.of(image) : Optional.empty();
    }
}
