package io.loopcsi.engine;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The on-disk layout of one pool, and the only code that writes its metadata:
 *
 * <pre>
 *   DIR/volumes/vol-....img    sparse image (the volume's bytes)
 *   DIR/volumes/vol-....json   metadata, written atomically (temp file, fsync, rename, fsync dir)
 *   DIR/snapshots/snap-....img / .json
 * </pre>
 *
 * The metadata file is the commit point: an image without metadata is a leftover of an
 * interrupted create (or delete) and is never served. IDs are checked against their alphabet
 * before any path is built.
 */
public class PoolDirectory {

    static final String IMG = ".img";
    static final String META = ".json";
    static final String TMP = ".tmp";

    private final Path root;
    private final Path volumes;
    private final Path snapshots;
    private final ObjectMapper json = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    public PoolDirectory(Path dir) {
        try {
            Files.createDirectories(dir);
            this.root = dir.toRealPath();
            this.volumes = Files.createDirectories(root.resolve("volumes"));
            this.snapshots = Files.createDirectories(root.resolve("snapshots"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot use pool directory " + dir + ": " + e.getMessage(), e);
        }
    }

    public Path root() {
        return root;
    }

    public Path volumeImage(String id) {
        return volumes.resolve(Ids.requireVolumeId(id) + IMG);
    }

    public Path snapshotImage(String id) {
        return snapshots.resolve(Ids.requireSnapshotId(id) + IMG);
    }

    /** Where an image is built before it is renamed to its final name. */
    public static Path tempOf(Path image) {
        return image.resolveSibling(image.getFileName() + TMP);
    }

    public Optional<VolumeMeta> readVolume(String id) {
        return read(volumes.resolve(Ids.requireVolumeId(id) + META), VolumeMeta.class);
    }

    public Optional<SnapshotMeta> readSnapshot(String id) {
        return read(snapshots.resolve(Ids.requireSnapshotId(id) + META), SnapshotMeta.class);
    }

    public void writeVolume(VolumeMeta meta) {
        writeAtomically(volumes.resolve(Ids.requireVolumeId(meta.id()) + META), meta);
    }

    public void writeSnapshot(SnapshotMeta meta) {
        writeAtomically(snapshots.resolve(Ids.requireSnapshotId(meta.id()) + META), meta);
    }

    /** Removes the metadata (the commit point of a delete), then the image. */
    public void deleteVolume(String id) {
        deleteVolume(id, () -> { });
    }

    /** As {@link #deleteVolume(String)}, running afterCommit between the two steps (for fail points). */
    public void deleteVolume(String id, Runnable afterCommit) {
        deleteCommitted(volumes.resolve(Ids.requireVolumeId(id) + META), volumeImage(id), afterCommit);
    }

    public void deleteSnapshot(String id) {
        deleteCommitted(snapshots.resolve(Ids.requireSnapshotId(id) + META), snapshotImage(id), () -> { });
    }

    /** Every committed volume, sorted by ID. */
    public List<VolumeMeta> listVolumes() {
        return list(volumes, VolumeMeta.class, Ids::isVolumeId);
    }

    public List<SnapshotMeta> listSnapshots() {
        return list(snapshots, SnapshotMeta.class, Ids::isSnapshotId);
    }

    /** Creates a sparse file of the given size at path (replacing it), fsynced. */
    public static void createSparse(Path path, long bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
            f.setLength(0);
            f.setLength(bytes); // ftruncate: a hole, nothing allocated
            f.getFD().sync();
        }
    }

    /** Grows an existing file to bytes (sparse), fsynced; never shrinks, never creates a missing file. */
    public static void growSparse(Path path, long bytes) throws IOException {
        if (!Files.isRegularFile(path)) {
            throw new NoSuchFileException(path.toString(), null, "image file is missing");
        }
        try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
            if (f.length() < bytes) {
                f.setLength(bytes);
                f.getFD().sync();
            }
        }
    }

    public static void rename(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("pool directory does not support atomic rename: " + e.getMessage(), e);
        }
        fsyncDir(to.getParent());
    }

    public static void fsyncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private <T> void writeAtomically(Path target, T value) {
        Path tmp = target.resolveSibling(target.getFileName() + TMP);
        try {
            byte[] bytes = json.writerWithDefaultPrettyPrinter().writeValueAsBytes(value);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(bytes);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            rename(tmp, target);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the start-up scan removes leftover temp files
            }
            throw EngineException.internal("cannot write " + target + ": " + e.getMessage(), e);
        }
    }

    private <T> Optional<T> read(Path file, Class<T> type) {
        try {
            return Optional.of(json.readValue(Files.readAllBytes(file), type));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw EngineException.internal("cannot read metadata " + file + ": " + e.getMessage(), e);
        }
    }

    private void deleteCommitted(Path meta, Path image, Runnable afterCommit) {
        try {
            if (Files.deleteIfExists(meta)) {
                fsyncDir(meta.getParent());
            }
            afterCommit.run();
            Files.deleteIfExists(image);
            Files.deleteIfExists(tempOf(image));
        } catch (IOException e) {
            throw EngineException.internal("cannot delete " + image + ": " + e.getMessage(), e);
        }
    }

    private <T> List<T> list(Path dir, Class<T> type, java.util.function.Predicate<String> isId) {
        TreeMap<String, T> found = new TreeMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + META)) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                String id = name.substring(0, name.length() - META.length());
                if (isId.test(id)) {
                    read(p, type).ifPresent(v -> found.put(id, v));
                }
            }
        } catch (IOException e) {
            throw EngineException.internal("cannot list " + dir + ": " + e.getMessage(), e);
        }
        return new ArrayList<>(found.values());
    }
}
