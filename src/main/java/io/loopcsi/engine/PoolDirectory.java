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
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.jboss.logging.Logger;

/**
 * The on-disk layout of one pool, and the only code that writes its metadata:
 *
 * <pre>
 *   DIR/volumes/vol-....img    sparse image (the volume's bytes)
 *   DIR/volumes/vol-....json   metadata, written atomically (temp file, fsync, rename, fsync dir)
 *   DIR/snapshots/snap-....img / .json
 *   DIR/loopcsi.lock           held by the process that serves the pool ({@link PoolLock})
 * </pre>
 *
 * Only root reads a pool: every file is created 0600 and every directory 0700 ({@link PoolModes}),
 * temp files included.
 *
 * The metadata file is the commit point: an image without metadata is a leftover of an
 * interrupted create (or delete) and is never served. IDs are checked against their alphabet
 * before any path is built.
 *
 * <p>The files are the source of truth. So that listing and capacity do not re-read and parse
 * every metadata file on every call (O(n) per create, O(n²) for n creates), committed metadata is
 * also kept in memory: an index loaded from the files on first use and updated by this class's
 * own writes and deletes once they are on disk. Any failed write or delete drops the index, and
 * the next reader loads it again from the files.
 */
public class PoolDirectory {

    static final String IMG = ".img";
    static final String META = ".json";
    static final String TMP = ".tmp";
    static final String VOLUMES = "volumes";
    static final String SNAPSHOTS = "snapshots";
    static final String GROUPS = "groups";
    /** A source's copy for a transfer, in {@link #transfersDir}: {@code <transfer ID>.source.img}. */
    static final String TRANSFER_COPY = ".source.img";
    private static final Logger LOG = Logger.getLogger(PoolDirectory.class);

    private final PoolLock lock;
    private final Path root;
    private final Path volumes;
    private final Path snapshots;
    private final Path groups;
    /**
     * Jackson, made at the first metadata read or write rather than with the pool: a driver's start
     * (lock, recovery, serving Probe) reads no metadata, and Jackson is ~350 classes to load.
     */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    }

    private final Index<VolumeMeta> volumeIndex;
    private final Index<SnapshotMeta> snapshotIndex;
    private final Index<GroupSnapshotMeta> groupIndex;

    /**
     * Committed metadata of one directory by ID, sorted. Loaded lazily from the files; every
     * change is applied after it is on disk, under the same monitor as the load, so a load that
     * races a write or delete never keeps a stale entry.
     */
    private final class Index<T> {
        private final Path dir;
        private final Class<T> type;
        private final Predicate<String> isId;
        /** null until loaded, and again after a failure. */
        private volatile ConcurrentSkipListMap<String, T> entries;

        Index(Path dir, Class<T> type, Predicate<String> isId) {
            this.dir = dir;
            this.type = type;
            this.isId = isId;
        }

        ConcurrentSkipListMap<String, T> entries() {
            ConcurrentSkipListMap<String, T> m = entries;
            if (m == null) {
                synchronized (this) {
                    m = entries;
                    if (m == null) {
                        m = new ConcurrentSkipListMap<>(scan(dir, type, isId));
                        entries = m;
                    }
                }
            }
            return m;
        }

        Optional<T> get(String id) {
            return Optional.ofNullable(entries().get(id));
        }

        synchronized void put(String id, T value) {
            if (entries != null) {
                entries.put(id, value);
            }
        }

        synchronized void remove(String id) {
            if (entries != null) {
                entries.remove(id);
            }
        }

        /** After a failure the disk state is unknown: the next reader loads it again. */
        synchronized void invalidate() {
            entries = null;
        }
    }

    /**
     * The pool at dir, under its lock: the one this process already holds (taken by the launcher),
     * else taken now, failing at once ({@link PoolLock.Locked}) while another process holds it.
     */
    public PoolDirectory(Path dir) {
        this(PoolLock.held(dir).orElseGet(() -> PoolLock.acquire(dir)));
    }

    /**
     * The pool whose lock is held: nothing of the pool is read, changed or recovered before the
     * lock is. A pool made by an earlier version gets this version's modes first (and says so).
     */
    public PoolDirectory(PoolLock lock) {
        this.lock = lock;
        this.root = lock.dir();
        try {
            int fixed = PoolModes.tighten(root);
            if (fixed > 0) {
                LOG.infof("pool %s: made %d files and directories private (files 0600, directories 0700); an earlier version had "
                        + "left them readable by other users", root, fixed);
            }
            this.volumes = PoolModes.createPrivateDir(root.resolve(VOLUMES));
            this.snapshots = PoolModes.createPrivateDir(root.resolve(SNAPSHOTS));
            this.volumeIndex = new Index<>(volumes, VolumeMeta.class, Ids::isVolumeId);
            this.snapshotIndex = new Index<>(snapshots, SnapshotMeta.class, Ids::isSnapshotId);
            this.groups = PoolModes.createPrivateDir(root.resolve(GROUPS));
            this.groupIndex = new Index<>(groups, GroupSnapshotMeta.class, Ids::isGroupSnapshotId);
        } catch (IOException e) {
            throw new IllegalStateException("cannot use pool directory " + root + ": " + e.getMessage(), e);
        }
    }

    /** The lock this pool is held under (released by closing it, or by the process' exit). */
    public PoolLock lock() {
        return lock;
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

    /** Where transfers keep their state on this node (the destination's progress, the source's copies). */
    public Path transfersDir() {
        return root.resolve("transfers");
    }

    /**
     * A destination's progress of the transfer into volume {@code volumeId} (the transfer ID is the
     * destination volume's ID): {@code transfers/<ID>.json}, written by transfer.TransferState. While
     * it exists, the volume's temporary image is a fetch to go on with, not a leftover ({@link VolumeEngine#recover}).
     */
    public static Path transferProgress(Path root, String volumeId) {
        return root.resolve("transfers").resolve(volumeId + ".json");
    }

    /**
     * What a destination's fetch into volume {@code volumeId} keeps on this node between attempts
     * (issue 35): its progress {@code transfers/<ID>.json} and the partial image
     * {@code volumes/<ID>.img.tmp} it goes on with. Not user data: the source still holds the content.
     *
     * @param imageBytes the partial image's size (its apparent size: the image is sparse), -1 when there is none
     * @param progressBytes the progress file's size
     */
    public record PartialFetch(String volumeId, long imageBytes, long progressBytes) {

        public boolean hasImage() {
            return imageBytes >= 0;
        }

        /** For the audit: what it is, with its files and their sizes. */
        public String describe() {
            return volumeId + " (an abandoned transfer's " + (hasImage() ? "partial image volumes/" + volumeId + IMG + TMP + ", "
                    + Sizes.format(imageBytes) + ", and its " : "") + "progress transfers/" + volumeId + META + ", " + progressBytes + " bytes)";
        }
    }

    /**
     * The destination fetches whose progress is in the pool directory at {@code root} now (a fetch
     * running, cut, or left by a volume whose object is gone), by volume ID, read from the directory:
     * what the disk audit compares with the node's LoopVolumes. A partial image without progress is
     * no fetch to go on with: {@link VolumeEngine#recover} removes it at the next start.
     */
    public static List<PartialFetch> partialFetches(Path root) throws IOException {
        List<PartialFetch> found = new ArrayList<>();
        Path dir = root.resolve("transfers");
        if (!Files.isDirectory(dir)) {
            return found;
        }
        TreeMap<String, Long> progress = new TreeMap<>();
        try (var files = Files.newDirectoryStream(dir, "*" + META)) {
            for (Path f : files) {
                String id = f.getFileName().toString();
                id = id.substring(0, id.length() - META.length());
                if (Ids.isVolumeId(id)) {
                    try {
                        progress.put(id, Files.size(f));
                    } catch (NoSuchFileException e) {
                        // forgotten meanwhile (the fetch ended)
                    }
                }
            }
        }
        for (var e : progress.entrySet()) {
            long image;
            try {
                image = Files.size(root.resolve(VOLUMES).resolve(e.getKey() + IMG + TMP));
            } catch (NoSuchFileException gone) {
                image = -1;
            }
            found.add(new PartialFetch(e.getKey(), image, e.getValue()));
        }
        return found;
    }

    /**
     * Deletes what a fetch into volume ID left (its partial image and progress); false when there
     * was neither. The caller holds the volume's lock and knows that nothing goes on with it.
     */
    boolean deletePartialFetch(String volumeId) throws IOException {
        Path tmp = tempOf(volumeImage(volumeId));
        Path progress = transferProgress(root, volumeId);
        boolean any = Files.deleteIfExists(tmp) | Files.deleteIfExists(progress);
        Files.deleteIfExists(progress.resolveSibling(progress.getFileName() + TMP));
        if (any) {
            fsyncDir(volumes);
            if (Files.isDirectory(progress.getParent())) {
                fsyncDir(progress.getParent());
            }
        }
        return any;
    }

    /**
     * The point-in-time copy of a volume that transfer {@code transferId} reads on its source node
     * ({@link VolumeEngine#transferCopy}). A transfer ID is a volume ID (the destination's), or at
     * least a plain file name.
     */
    public Path transferCopyImage(String transferId) {
        if (transferId == null || !transferId.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}")) {
            throw EngineException.invalid("transfer ID " + Ids.quote(String.valueOf(transferId)) + " is not a plain name");
        }
        return transfersDir().resolve(transferId + TRANSFER_COPY);
    }

    /** The transfer IDs whose copy ({@link #transferCopyImage}) is on disk, finished or not. */
    public java.util.Set<String> transferCopies() throws IOException {
        java.util.Set<String> ids = new java.util.TreeSet<>();
        if (!Files.isDirectory(transfersDir())) {
            return ids;
        }
        try (var files = Files.newDirectoryStream(transfersDir(), "*" + TRANSFER_COPY + "*")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                ids.add(n.substring(0, n.indexOf(TRANSFER_COPY)));
            }
        }
        return ids;
    }

    /**
     * Sum of the sizes of the transfers' copies on disk ({@link #transferCopyImage}, committed ones:
     * one in the making is an in-flight reservation of {@link VolumeEngine}). A directory listing,
     * usually of nothing: the copies last only while their transfers do.
     */
    public long transferCopyBytes() {
        if (!Files.isDirectory(transfersDir())) {
            return 0;
        }
        long sum = 0;
        try (var files = Files.newDirectoryStream(transfersDir(), "*" + TRANSFER_COPY)) {
            for (Path f : files) {
                sum += Files.size(f);
            }
        } catch (java.nio.file.NoSuchFileException e) {
            return sum; // dropped meanwhile
        } catch (IOException e) {
            throw EngineException.internal("cannot list " + transfersDir() + ": " + e.getMessage(), e);
        }
        return sum;
    }

    /** Removes a transfer's copy and what a copy cut short left; false when there was none. */
    public boolean deleteTransferCopy(String transferId) throws IOException {
        Path image = transferCopyImage(transferId);
        boolean any = Files.deleteIfExists(tempOf(image)) | Files.deleteIfExists(image);
        if (any) {
            fsyncDir(image.getParent());
        }
        return any;
    }

    /**
     * The volume and snapshot IDs whose image file is in the pool directory at {@code root} now, read
     * from the directory itself (not this process' metadata index), so that files removed or added
     * behind the driver's back are seen: what the node's disk audit compares with the objects.
     */
    public static java.util.Set<String> imagesOnDisk(Path root) throws IOException {
        java.util.Set<String> ids = new java.util.TreeSet<>();
        for (Path dir : List.of(root.resolve("volumes"), root.resolve("snapshots"))) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (var files = Files.newDirectoryStream(dir, "*" + IMG)) {
                for (Path f : files) {
                    String id = f.getFileName().toString();
                    id = id.substring(0, id.length() - IMG.length());
                    if (Ids.isVolumeId(id) || Ids.isSnapshotId(id)) {
                        ids.add(id);
                    }
                }
            }
        }
        return ids;
    }

    /** Where an image is built before it is renamed to its final name. */
    public static Path tempOf(Path image) {
        return image.resolveSibling(image.getFileName() + TMP);
    }

    public Optional<VolumeMeta> readVolume(String id) {
        return volumeIndex.get(Ids.requireVolumeId(id));
    }

    public Optional<SnapshotMeta> readSnapshot(String id) {
        return snapshotIndex.get(Ids.requireSnapshotId(id));
    }

    public void writeVolume(VolumeMeta meta) {
        write(volumeIndex, volumes.resolve(Ids.requireVolumeId(meta.id()) + META), meta.id(), meta);
    }

    public void writeSnapshot(SnapshotMeta meta) {
        write(snapshotIndex, snapshots.resolve(Ids.requireSnapshotId(meta.id()) + META), meta.id(), meta);
    }

    private <T> void write(Index<T> index, Path target, String id, T meta) {
        try {
            writeAtomically(target, meta);
        } catch (RuntimeException e) {
            index.invalidate();
            throw e;
        }
        index.put(id, meta);
    }

    /** Removes the metadata (the commit point of a delete), then the image. */
    public void deleteVolume(String id) {
        deleteVolume(id, () -> { });
    }

    /** As {@link #deleteVolume(String)}, running afterCommit between the two steps (for fail points). */
    public void deleteVolume(String id, Runnable afterCommit) {
        deleteCommitted(volumeIndex, id, volumes.resolve(Ids.requireVolumeId(id) + META), volumeImage(id), afterCommit);
    }

    public void deleteSnapshot(String id) {
        deleteCommitted(snapshotIndex, id, snapshots.resolve(Ids.requireSnapshotId(id) + META), snapshotImage(id), () -> { });
    }

    public Optional<GroupSnapshotMeta> readGroupSnapshot(String id) {
        return groupIndex.get(Ids.requireGroupSnapshotId(id));
    }

    public void writeGroupSnapshot(GroupSnapshotMeta meta) {
        write(groupIndex, groups.resolve(Ids.requireGroupSnapshotId(meta.id()) + META), meta.id(), meta);
    }

    /** Removes a group's record (its members are snapshots of their own, deleted before). */
    public void deleteGroupSnapshot(String id) {
        Path meta = groups.resolve(Ids.requireGroupSnapshotId(id) + META);
        try {
            if (Files.deleteIfExists(meta)) {
                fsyncDir(groups);
            }
            groupIndex.remove(id);
        } catch (IOException e) {
            groupIndex.invalidate();
            throw EngineException.internal("cannot delete " + meta + ": " + e.getMessage(), e);
        }
    }

    /** Every committed volume, sorted by ID. */
    public List<VolumeMeta> listVolumes() {
        return new ArrayList<>(volumeIndex.entries().values());
    }

    public List<SnapshotMeta> listSnapshots() {
        return new ArrayList<>(snapshotIndex.entries().values());
    }

    /** Sum of the capacities of every committed volume, without copying the list. */
    public long volumeBytes() {
        long sum = 0;
        for (VolumeMeta v : volumeIndex.entries().values()) {
            sum += v.capacityBytes();
        }
        return sum;
    }

    /** Sum of the sizes of every committed snapshot. */
    public long snapshotBytes() {
        long sum = 0;
        for (SnapshotMeta s : snapshotIndex.entries().values()) {
            sum += s.sizeBytes();
        }
        return sum;
    }

    /** Creates a sparse file (0600) of the given size at path (replacing it), fsynced. */
    public static void createSparse(Path path, long bytes) throws IOException {
        PoolModes.createPrivateFile(path);
        try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
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
            byte[] bytes = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(value);
            PoolModes.createPrivateFile(tmp);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
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
            return Optional.of(Json.MAPPER.readValue(Files.readAllBytes(file), type));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw EngineException.internal("cannot read metadata " + file + ": " + e.getMessage(), e);
        }
    }

    private <T> void deleteCommitted(Index<T> index, String id, Path meta, Path image, Runnable afterCommit) {
        try {
            if (Files.deleteIfExists(meta)) {
                fsyncDir(meta.getParent());
            }
            index.remove(id);
            afterCommit.run();
            Files.deleteIfExists(image);
            Files.deleteIfExists(tempOf(image));
        } catch (IOException e) {
            index.invalidate();
            throw EngineException.internal("cannot delete " + image + ": " + e.getMessage(), e);
        }
    }

    /** Reads every metadata file of dir, by ID. */
    private <T> TreeMap<String, T> scan(Path dir, Class<T> type, Predicate<String> isId) {
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
        return found;
    }
}
