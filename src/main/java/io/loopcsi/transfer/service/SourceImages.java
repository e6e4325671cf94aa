package io.loopcsi.transfer.service;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import io.loopcsi.engine.Ids;
import io.loopcsi.engine.PoolDirectory;

/**
 * The image of a transfer's source on this node: a volume's or a snapshot's, by its ID, at the
 * engine's path for it. Empty for an ID of neither form or whose image is not here (NOT_FOUND).
 */
public final class SourceImages {

    private final PoolDirectory pool;

    public SourceImages(PoolDirectory pool) {
        this.pool = pool;
    }

    public Optional<Path> imageOf(String source) {
        Path image;
        if (Ids.isVolumeId(source)) {
            image = pool.volumeImage(source);
        } else if (Ids.isSnapshotId(source)) {
            image = pool.snapshotImage(source);
        } else {
            return Optional.empty();
        }
        return Files.isRegularFile(image) ? Optional.of(image) : Optional.empty();
    }
}
