package io.loopcsi.engine;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

/**
 * The local volume engine: volumes and snapshots as sparse image files in one pool directory on
 * this machine. It knows nothing of gRPC or Kubernetes. Creates are crash-safe because the image
 * is built under a temporary name, renamed into place, and only then committed by writing the
 * metadata file; {@link #recover()} removes what an interrupted operation left behind.
 */
public class VolumeEngine implements VolumeProvider {

    private static final Logger LOG = Logger.getLogger(VolumeEngine.class);
    /** How long a CreateVolume/CreateSnapshot waits for another call with the same name. */
    static final long SAME_NAME_WAIT_MILLIS = 120_000;

    private final PoolDirectory pool;
    private final CapacityPolicy policy;
    private final String nodeId;
    private final CommandRunner runner;
    private final LoopDevices loops;
    private final VolumeLocks locks;
    private final FailPoints failPoints;
    private final ThickAllocation thick;
    private final SectorSizes sectors;
    /** Bytes promised to creates that have passed admission but not committed yet, by ID. */
    private final Map<String, InFlight> reserved = new ConcurrentHashMap<>();
    private final Object admission = new Object();

    /**
     * @param policy how the pool's space is counted here: the cap, the host reserve, the thin overcommit ratio
     * @param thick the node's keeper of thick allocations, shared with {@link NodeVolumes} (its record feeds the condition)
     * @param sectors the pool's choice of sector size for new volumes, shared with {@link NodeVolumes} (one probe per pool)
     */
    public VolumeEngine(PoolDirectory pool, CapacityPolicy policy, String nodeId, CommandRunner runner, LoopDevices loops,
            VolumeLocks locks, FailPoints failPoints, ThickAllocation thick, SectorSizes sectors) {
        this.sectors = sectors;
        this.thick = thick;
        this.failPoints = failPoints;
        this.pool = pool;
        this.policy = policy;
        this.nodeId = nodeId;
        this.runner = runner;
        this.loops = loops;
        this.locks = locks;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    public PoolDirectory pool() {
        return pool;
    }

    /**
     * Removes what interrupted operations left: temp files, and images that were never committed
     * (no metadata file) or whose delete was interrupted after its commit. Returns what it did.
     */
    public List<String> recover() {
        List<String> done = new ArrayList<>();
        for (Path dir : List.of(pool.root().resolve("volumes"), pool.root().resolve("snapshots"), pool.root().resolve("groups"))) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) {
                    String f = p.getFileName().toString();
                    boolean leftover;
                    if (f.endsWith(PoolDirectory.TMP)) {
                        // a volume's image being fetched from another node is kept while its progress is (the fetch goes on)
                        String base = f.substring(0, f.length() - PoolDirectory.TMP.length());
                        leftover = !(dir.endsWith("volumes") && base.endsWith(PoolDirectory.IMG) && Files.exists(PoolDirectory.transferProgress(
                                pool.root(), base.substring(0, base.length() - PoolDirectory.IMG.length()))));
                    } else if (f.endsWith(PoolDirectory.IMG)) {
                        String base = f.substring(0, f.length() - PoolDirectory.IMG.length());
                        leftover = !Files.exists(dir.resolve(base + PoolDirectory.META)) && loops.find(p).isEmpty();
                    } else {
                        leftover = false;
                    }
                    if (leftover) {
                        Files.deleteIfExists(p);
                        done.add("removed uncommitted " + p);
                    }
                }
            } catch (IOException e) {
                throw EngineException.internal("cannot scan " + dir + ": " + e.getMessage(), e);
            }
        }
        done.forEach(LOG::info);
        return done;
    }

    // ---- volumes ----------------------------------------------------------------------------

    @Override
    public VolumeMeta createVolume(CreateRequest req) {
        String id = Ids.volumeIdFor(req.name());
        String fsType = req.mode() == VolumeMode.BLOCK ? "" : req.fsType();
        try (VolumeLocks.Held h = locks.acquireWaiting(id, SAME_NAME_WAIT_MILLIS)) {
            Optional<SnapshotMeta> snap = Optional.empty();
            Optional<VolumeMeta> srcVol = Optional.empty();
            long minimum = req.mode() == VolumeMode.BLOCK ? Sizes.MIB : Filesystems.minimumBytes(fsType);
            String minimumReason = req.mode() == VolumeMode.BLOCK ? "block volumes need at least 1Mi"
                    : fsType + " volumes need at least " + Sizes.format(minimum) + " (mkfs." + fsType + " refuses smaller)";
            if (req.sourceSnapshotId() != null) {
                snap = Optional.of(snapshot(Ids.requireSnapshotId(req.sourceSnapshotId()))
                        .orElseThrow(() -> EngineException.notFound("source snapshot " + req.sourceSnapshotId() + " does not exist")));
                checkSourceCompatible("snapshot " + snap.get().id(), snap.get().sourceMode(), snap.get().sourceFsType(), req.mode(), fsType);
                minimum = Math.max(minimum, snap.get().sizeBytes());
                minimumReason = "the source snapshot holds " + Sizes.format(snap.get().sizeBytes());
            } else if (req.sourceVolumeId() != null) {
                srcVol = Optional.of(volume(Ids.requireVolumeId(req.sourceVolumeId()))
                        .orElseThrow(() -> EngineException.notFound("source volume " + req.sourceVolumeId() + " does not exist")));
                checkSourceCompatible("volume " + srcVol.get().id(), srcVol.get().mode(), srcVol.get().fsType(), req.mode(), fsType);
                minimum = Math.max(minimum, srcVol.get().capacityBytes());
                minimumReason = "the source volume holds " + Sizes.format(srcVol.get().capacityBytes());
            }
            long size = VolumeSizer.size(req.requiredBytes(), req.limitBytes(), minimum, minimumReason);

            Optional<VolumeMeta> existing = pool.readVolume(id);
            if (existing.isPresent()) {
                return sameOrConflict(existing.get(), req, fsType);
            }
            reserve(id, size, req.mutable().thick());
            try {
                Path image = pool.volumeImage(id);
                Path tmp = PoolDirectory.tempOf(image);
                if (snap.isPresent()) {
                    copyImage(pool.snapshotImage(snap.get().id()), tmp, size, req.mutable().thick());
                } else if (srcVol.isPresent()) {
                    String srcId = srcVol.get().id();
                    Path srcImage = pool.volumeImage(srcId);
                    try (VolumeLocks.Held src = locks.tryAcquire(srcId)) {
                        boolean own = req.mutable().thick() || srcVol.get().mutable().thick();
                        quiesced(srcImage, () -> copyImage(srcImage, tmp, size, own));
                    }
                } else {
                    PoolDirectory.createSparse(tmp, size);
                }
                if (req.mutable().thick()) {
                    allocate(tmp, size, id);
                }
                failPoints.reach("create.image-written");
                PoolDirectory.rename(tmp, image);
                failPoints.reach("create.image-renamed");
                // a restore or clone holds its source's filesystem, made for its source's sector size
                int sectorSize = snap.isPresent() ? snap.get().logicalBlockSize()
                        : srcVol.isPresent() ? srcVol.get().logicalBlockSize() : sectors.forNewVolume();
                VolumeMeta meta = new VolumeMeta(id, req.name(), size, req.mode(), fsType, snap.map(SnapshotMeta::id).orElse(null),
                        srcVol.map(VolumeMeta::id).orElse(null), req.parameters(), System.currentTimeMillis(), req.mutable().given(),
                        sectorSize);
                pool.writeVolume(meta);
                LOG.infof("created volume %s (%s, %s%s) for %s", id, Sizes.format(size), req.mode(),
                        fsType.isEmpty() ? "" : " " + fsType, req.name());
                return meta;
            } catch (IOException e) {
                throw EngineException.internal("cannot create image for " + id + ": " + e.getMessage(), e);
            } catch (RuntimeException e) {
                deleteQuietly(PoolDirectory.tempOf(pool.volumeImage(id)));
                throw e;
            } finally {
                reserved.remove(id);
            }
        }
    }

    /**
     * What a cross-node restore or clone knows of its source, which is not on this node.
     *
     * @param logicalBlockSize the source's sector size (512 or 4096), which the new volume keeps as a
     *        same-node restore does; 0 when unknown (a source published before sizes were): then
     *        the one its content allows ({@link SectorSizes#forContents})
     */
    public record RemoteSource(String node, VolumeMode mode, String fsType, long sizeBytes, int logicalBlockSize) {
        public RemoteSource {
            if (logicalBlockSize != 0 && !SectorSizes.valid(logicalBlockSize)) {
                throw EngineException.invalid("the source's sector size " + logicalBlockSize + " is neither 512 nor 4096");
            }
        }
    }

    /**
     * Fills a new image with the source's content (a transfer from the source's node); the image is
     * made by it, of the source's size. ABORTED: cut short as this node stops, to be gone on with
     * (the image is kept, with the fill's progress in {@link PoolDirectory#transferProgress}).
     */
    @FunctionalInterface
    public interface ImageFill {
        void into(Path image, long sourceBytes);
    }

    /**
     * A restore or clone whose source lives on another node (docs/architecture.md, "Transfer"): as
     * {@link #createVolume} for a local source, but the content comes from {@code fill} (which
     * fetches it into the temporary image, the source's size), then the image grows to the volume's
     * size and is allocated in full when thick. The capacity is reserved for the whole fetch; any
     * failure leaves no image and nothing counted. An existing volume answers as createVolume does.
     */
    public VolumeMeta createVolumeFrom(CreateRequest req, RemoteSource src, ImageFill fill) {
        String id = Ids.volumeIdFor(req.name());
        String fsType = req.mode() == VolumeMode.BLOCK ? "" : req.fsType();
        try (VolumeLocks.Held h = locks.acquireWaiting(id, SAME_NAME_WAIT_MILLIS)) {
            String what = req.sourceSnapshotId() != null ? "snapshot " + req.sourceSnapshotId() : "volume " + req.sourceVolumeId();
            if (src.mode() != null) {
                checkSourceCompatible(what + " on node " + src.node(), src.mode(), Objects.toString(src.fsType(), ""), req.mode(), fsType);
            }
            long minimum = Math.max(req.mode() == VolumeMode.BLOCK ? Sizes.MIB : Filesystems.minimumBytes(fsType), src.sizeBytes());
            long size = VolumeSizer.size(req.requiredBytes(), req.limitBytes(), minimum, "the source " + what + " holds "
                    + Sizes.format(src.sizeBytes()));
            Optional<VolumeMeta> existing = pool.readVolume(id);
            if (existing.isPresent()) {
                return sameOrConflict(existing.get(), req, fsType);
            }
            reserve(id, size, req.mutable().thick());
            Path image = pool.volumeImage(id);
            Path tmp = PoolDirectory.tempOf(image);
            try {
                fill.into(tmp, src.sizeBytes());
                PoolDirectory.growSparse(tmp, size);
                try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                if (req.mutable().thick()) {
                    allocate(tmp, size, id);
                }
                // the content's filesystem or partition table was made for the source's sector size
                int sectorSize = src.logicalBlockSize() != 0 ? src.logicalBlockSize() : sectors.forContents(req.mode(), tmp);
                PoolDirectory.rename(tmp, image);
                VolumeMeta meta = new VolumeMeta(id, req.name(), size, req.mode(), fsType, req.sourceSnapshotId(), req.sourceVolumeId(),
                        req.parameters(), System.currentTimeMillis(), req.mutable().given(), sectorSize);
                pool.writeVolume(meta);
                LOG.infof("created volume %s (%s, %s%s) for %s from %s on node %s", id, Sizes.format(size), req.mode(),
                        fsType.isEmpty() ? "" : " " + fsType, req.name(), what, src.node());
                return meta;
            } catch (IOException e) {
                deleteQuietly(tmp);
                throw EngineException.internal("cannot create image for " + id + ": " + e.getMessage(), e);
            } catch (EngineException e) {
                if (e.kind() != EngineException.Kind.ABORTED) {
                    deleteQuietly(tmp);
                }
                throw e;
            } catch (RuntimeException e) {
                deleteQuietly(tmp);
                throw e;
            } finally {
                reserved.remove(id); // a fill to be gone on with reserves again when it does
            }
        }
    }

    private static void checkSourceCompatible(String what, VolumeMode srcMode, String srcFs, VolumeMode mode, String fsType) {
        if (srcMode != mode) {
            throw EngineException.invalid("volume_content_source: " + what + " is a " + srcMode + " volume, the request asks for "
                    + mode + "; a volume restored or cloned keeps its source's mode");
        }
        if (mode == VolumeMode.FILESYSTEM && !srcFs.equals(fsType)) {
            throw EngineException.invalid("volume_content_source: " + what + " holds " + srcFs + ", the request asks for " + fsType);
        }
    }

    private static VolumeMeta sameOrConflict(VolumeMeta v, CreateRequest req, String fsType) {
        List<String> diffs = new ArrayList<>();
        if (v.mode() != req.mode()) {
            diffs.add("mode " + v.mode() + " vs " + req.mode());
        }
        if (!v.fsType().equals(fsType)) {
            diffs.add("fsType " + v.fsType() + " vs " + fsType);
        }
        if (v.capacityBytes() < req.requiredBytes() || (req.limitBytes() > 0 && v.capacityBytes() > req.limitBytes())) {
            diffs.add("capacity " + v.capacityBytes() + " outside [" + req.requiredBytes() + ", "
                    + (req.limitBytes() > 0 ? req.limitBytes() : "unlimited") + "]");
        }
        if (!Objects.equals(v.sourceSnapshotId(), req.sourceSnapshotId()) || !Objects.equals(v.sourceVolumeId(), req.sourceVolumeId())) {
            diffs.add("content source differs");
        }
        if (!v.parameters().equals(req.parameters() == null ? Map.of() : req.parameters())) {
            diffs.add("parameters differ");
        }
        if (!diffs.isEmpty()) {
            throw EngineException.alreadyExists("volume " + Ids.quote(req.name()) + " already exists as " + v.id() + " with other properties ("
                    + String.join("; ", diffs) + "); use another name or the same request");
        }
        return v;
    }

    @Override
    public void deleteVolume(String volumeId) {
        Ids.requireVolumeId(volumeId);
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            Path image = pool.volumeImage(volumeId);
            loops.find(image).ifPresent(dev -> {
                if (loops.pendingDetach(dev)) {
                    throw EngineException.precondition("volume " + volumeId + " was unstaged on node " + nodeId + ", but its loop device "
                            + dev + " is still open elsewhere (a process, or a mount of it in another mount namespace) and goes when that "
                            + "closes it; the volume is deleted then, retry");
                }
                throw EngineException.precondition("volume " + volumeId + " is still staged on node " + nodeId + " (loop device " + dev
                        + "); unstage it before deleting");
            });
            boolean existed = pool.readVolume(volumeId).isPresent();
            pool.deleteVolume(volumeId, () -> failPoints.reach("delete.metadata-removed"));
            try {
                Files.deleteIfExists(PoolDirectory.transferProgress(pool.root(), volumeId)); // a fetch cut short that is not gone on with
            } catch (IOException e) {
                throw EngineException.internal("cannot delete the transfer progress of volume " + volumeId + ": " + e.getMessage(), e);
            }
            if (existed) {
                LOG.infof("deleted volume %s", volumeId);
            }
        }
    }

    @Override
    public Optional<VolumeMeta> volume(String volumeId) {
        return Ids.isVolumeId(volumeId) ? pool.readVolume(volumeId) : Optional.empty();
    }

    @Override
    public List<VolumeMeta> volumes() {
        return pool.listVolumes();
    }

    @Override
    public Condition condition(String volumeId) {
        VolumeMeta v = volume(volumeId).orElseThrow(() -> EngineException.notFound("volume " + volumeId + " does not exist"));
        Path image = pool.volumeImage(v.id());
        try {
            long size = Files.size(image);
            if (size < v.capacityBytes()) {
                return Condition.abnormal("backing file " + image + " is " + size + " bytes, smaller than the volume's " + v.capacityBytes());
            }
        } catch (IOException e) {
            return Condition.abnormal("backing file " + image + " is missing or unreadable: " + e.getMessage());
        }
        return thick.condition(v);
    }

    @Override
    public VolumeMeta expandVolume(String volumeId, long requiredBytes, long limitBytes) {
        Ids.requireVolumeId(volumeId);
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            VolumeMeta v = pool.readVolume(volumeId).orElseThrow(() -> EngineException.notFound("volume " + volumeId + " does not exist"));
            long size = VolumeSizer.size(requiredBytes, limitBytes, Sizes.MIB, "volumes need at least 1Mi");
            if (requiredBytes == 0 || size <= v.capacityBytes()) {
                if (limitBytes > 0 && v.capacityBytes() > limitBytes) {
                    throw EngineException.outOfRange("volume " + volumeId + " is already " + v.capacityBytes()
                            + " bytes, above limit_bytes " + limitBytes + "; volumes never shrink");
                }
                return v;
            }
            reserve(volumeId, size - v.capacityBytes(), v.mutable().thick());
            try {
                Path image = pool.volumeImage(volumeId);
                PoolDirectory.growSparse(image, size);
                if (v.mutable().thick()) {
                    allocate(image, size, volumeId);
                }
                failPoints.reach("expand.image-grown");
                VolumeMeta grown = v.withCapacity(size);
                pool.writeVolume(grown);
                thick.keep(grown); // a thick volume allocated whole: whatever was recorded against it is past
                // An attached device sees the new size at once; the filesystem grows in NodeExpandVolume.
                loops.find(image).ifPresent(loops::refreshCapacity);
                LOG.infof("expanded volume %s from %s to %s", volumeId, Sizes.format(v.capacityBytes()), Sizes.format(size));
                return grown;
            } catch (IOException e) {
                throw EngineException.internal("cannot grow " + volumeId + ": " + e.getMessage(), e);
            } finally {
                reserved.remove(volumeId);
            }
        }
    }

    @Override
    public boolean modifiable() {
        return true;
    }

    /**
     * Applies changed mutable parameters, then commits them to the metadata: direct I/O first
     * (switched live on an attached device; reverted if what follows fails), then thick
     * allocation. A retry after a crash applies them again (both are idempotent). {@code provisioning=thick}
     * asked of a volume that is thick already re-checks its image and allocates what a trim inside
     * punched out (RESOURCE_EXHAUSTED when the host cannot hold it any more): the metadata saying
     * thick is no proof that the blocks are there.
     */
    @Override
    public VolumeMeta modifyVolume(String volumeId, MutableParameters changes) {
        Ids.requireVolumeId(volumeId);
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            VolumeMeta v = pool.readVolume(volumeId).orElseThrow(() -> EngineException.notFound("volume " + volumeId + " does not exist"));
            MutableParameters was = v.mutable();
            MutableParameters next = was.with(changes);
            Path image = pool.volumeImage(volumeId);
            if (next.equals(was)) {
                if (next.thick()) {
                    // thick asked again: the image is checked, not the metadata (a trim inside may have punched holes)
                    allocate(image, v.capacityBytes(), volumeId);
                    thick.keep(v);
                }
                return v;
            }
            long extraCharge = next.thick() && !was.thick() ? v.capacityBytes() - policy.charge(v.capacityBytes(), false) : 0;
            if (extraCharge > 0) {
                // thin to thick under overcommit: the cap is charged the rest of its size, admitted like a create
                reserve(volumeId, new InFlight(0, extraCharge), true);
            }
            try {
                return applyModify(v, was, next, image);
            } finally {
                reserved.remove(volumeId);
            }
        }
    }

    private VolumeMeta applyModify(VolumeMeta v, MutableParameters was, MutableParameters next, Path image) {
        String volumeId = v.id();
        Optional<String> dev = loops.find(image);
        boolean dioChanged = dev.isPresent() && next.directIo() != was.directIo();
        if (dioChanged) {
            loops.setDirectIo(dev.get(), next.directIo());
        }
        try {
            if (next.thick()) {
                allocate(image, v.capacityBytes(), volumeId); // also when it was thick: the image decides, not the metadata
            }
            VolumeMeta m = v.withMutable(next);
            pool.writeVolume(m);
            thick.keep(m);
            LOG.infof("modified volume %s: %s -> %s", volumeId, was.given(), next.given());
            return m;
        } catch (RuntimeException e) {
            if (dioChanged) {
                try {
                    loops.setDirectIo(dev.get(), was.directIo());
                } catch (RuntimeException again) {
                    e.addSuppressed(again);
                }
            }
            throw e;
        }
    }

    /**
     * Allocates every block of an image (thick provisioning): refused with RESOURCE_EXHAUSTED when
     * the host filesystem has less free space than the image's unallocated part, or when
     * fallocate runs out of space.
     */
    private void allocate(Path image, long size, String id) {
        long unallocated = Math.max(0, size - thick.allocatedBytes(image));
        InFlight own = reserved.get(id);
        long free = hostFreeBytes() - inFlightBytes() + (own == null ? 0 : own.bytes());
        if (unallocated > free) {
            throw EngineException.exhausted("provisioning=thick: " + id + " needs " + Sizes.format(unallocated) + " more on the host "
                    + "filesystem under " + pool.root() + ", which has " + Sizes.format(Math.max(0, free)) + " free");
        }
        CommandRunner.Result r = thick.fallocate(image, size);
        if (!r.ok()) {
            String why = r.stderr().strip();
            if (why.contains("No space")) {
                throw EngineException.exhausted("provisioning=thick: the host filesystem under " + pool.root() + " cannot hold " + id
                        + " (" + Sizes.format(size) + "): " + why);
            }
            throw EngineException.internal("provisioning=thick: fallocate " + image + ": " + why, null);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warnf("cannot remove %s: %s (removed at the next start)", p, e.getMessage());
        }
    }

    // ---- group snapshots --------------------------------------------------------------------

    @Override
    public boolean groupSnapshots() {
        return true;
    }

    /**
     * Snapshots several volumes at one instant: every mounted member is frozen (fsfreeze) before
     * the first copy and thawed after the last (thawed whatever failed), so the members are as a
     * crash would have left them, together. Members not mounted have their device buffers flushed.
     * Member snapshots are committed first, the group record last: a retry after an interruption
     * removes members committed without their group and takes them again.
     */
    @Override
    public GroupSnapshotMeta createGroupSnapshot(String name, List<String> sourceVolumeIds) {
        String id = Ids.groupSnapshotIdFor(name);
        List<String> sources = sourceVolumeIds.stream().distinct().sorted().toList();
        sources.forEach(s -> {
            if (!Ids.isVolumeId(s)) {
                throw EngineException.notFound("source volume " + Ids.quote(s) + " does not exist");
            }
        });
        try (VolumeLocks.Held h = locks.acquireWaiting(id, SAME_NAME_WAIT_MILLIS)) {
            Optional<GroupSnapshotMeta> existing = pool.readGroupSnapshot(id);
            if (existing.isPresent()) {
                if (!existing.get().sourceVolumeIds().equals(sources)) {
                    throw EngineException.alreadyExists("group snapshot " + Ids.quote(name) + " already exists as " + id + " of volumes "
                            + existing.get().sourceVolumeIds() + ", not of " + sources);
                }
                return existing.get();
            }
            List<VolumeLocks.Held> held = new ArrayList<>();
            try {
                for (String s : sources) {
                    held.add(locks.tryAcquire(s));
                }
                return takeGroup(id, name, sources);
            } finally {
                for (int i = held.size() - 1; i >= 0; i--) {
                    held.get(i).close();
                }
            }
        }
    }

    private GroupSnapshotMeta takeGroup(String id, String name, List<String> sources) {
        List<VolumeMeta> vols = new ArrayList<>();
        long total = 0;
        for (String s : sources) {
            VolumeMeta v = pool.readVolume(s).orElseThrow(() -> EngineException.notFound("source volume " + s + " does not exist"));
            vols.add(v);
            total += v.capacityBytes();
        }
        List<String> members = sources.stream().map(s -> Ids.memberSnapshotIdFor(name, s)).toList();
        members.forEach(pool::deleteSnapshot); // what an interrupted attempt committed without its group
        reserve(id, total, true);
        List<Path> tmps = members.stream().map(m -> PoolDirectory.tempOf(pool.snapshotImage(m))).toList();
        try {
            List<Path> images = sources.stream().map(pool::volumeImage).toList();
            quiescedTogether(images, () -> {
                for (int i = 0; i < images.size(); i++) {
                    copyImage(images.get(i), tmps.get(i), vols.get(i).capacityBytes(), vols.get(i).mutable().thick());
                }
            });
            long now = System.currentTimeMillis();
            for (int i = 0; i < members.size(); i++) {
                VolumeMeta v = vols.get(i);
                PoolDirectory.rename(tmps.get(i), pool.snapshotImage(members.get(i)));
                pool.writeSnapshot(new SnapshotMeta(members.get(i), name + "/" + v.id(), v.id(), v.capacityBytes(), v.mode(), v.fsType(),
                        now, id, v.logicalBlockSize()));
            }
            failPoints.reach("group.members-written");
            GroupSnapshotMeta g = new GroupSnapshotMeta(id, name, sources, members, now);
            pool.writeGroupSnapshot(g);
            LOG.infof("created group snapshot %s of %s (%s)", id, sources, Sizes.format(total));
            return g;
        } catch (IOException e) {
            throw EngineException.internal("cannot snapshot group " + Ids.quote(name) + ": " + e.getMessage(), e);
        } finally {
            reserved.remove(id);
            tmps.forEach(VolumeEngine::deleteQuietly);
        }
    }

    @Override
    public void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
        if (!Ids.isGroupSnapshotId(groupSnapshotId)) {
            return; // cannot exist
        }
        try (VolumeLocks.Held h = locks.tryAcquire(groupSnapshotId)) {
            Optional<GroupSnapshotMeta> g = pool.readGroupSnapshot(groupSnapshotId);
            if (g.isEmpty()) {
                return;
            }
            if (!snapshotIds.isEmpty() && !new java.util.TreeSet<>(snapshotIds).equals(new java.util.TreeSet<>(g.get().snapshotIds()))) {
                throw EngineException.invalid("snapshot_ids " + snapshotIds + " are not the members of group snapshot " + groupSnapshotId
                        + ": " + g.get().snapshotIds());
            }
            for (String m : g.get().snapshotIds()) {
                deleteSnapshotOf(m);
            }
            pool.deleteGroupSnapshot(groupSnapshotId);
            LOG.infof("deleted group snapshot %s", groupSnapshotId);
        }
    }

    @Override
    public Optional<GroupSnapshotMeta> groupSnapshot(String groupSnapshotId) {
        return Ids.isGroupSnapshotId(groupSnapshotId) ? pool.readGroupSnapshot(groupSnapshotId) : Optional.empty();
    }

    // ---- snapshots --------------------------------------------------------------------------

    @Override
    public SnapshotMeta createSnapshot(String name, String sourceVolumeId) {
        String id = Ids.snapshotIdFor(name);
        Ids.requireVolumeId(sourceVolumeId);
        try (VolumeLocks.Held h = locks.acquireWaiting(id, SAME_NAME_WAIT_MILLIS)) {
            Optional<SnapshotMeta> existing = pool.readSnapshot(id);
            if (existing.isPresent()) {
                if (!existing.get().sourceVolumeId().equals(sourceVolumeId)) {
                    throw EngineException.alreadyExists("snapshot " + Ids.quote(name) + " already exists as " + id + " of volume "
                            + existing.get().sourceVolumeId() + ", not of " + sourceVolumeId);
                }
                return existing.get();
            }
            try (VolumeLocks.Held src = locks.tryAcquire(sourceVolumeId)) {
                VolumeMeta v = pool.readVolume(sourceVolumeId)
                        .orElseThrow(() -> EngineException.notFound("source volume " + sourceVolumeId + " does not exist"));
                reserve(id, v.capacityBytes(), true); // a snapshot is a full copy: charged in full
                try {
                    Path image = pool.snapshotImage(id);
                    Path tmp = PoolDirectory.tempOf(image);
                    Path source = pool.volumeImage(sourceVolumeId);
                    quiesced(source, () -> copyImage(source, tmp, v.capacityBytes(), v.mutable().thick()));
                    failPoints.reach("snapshot.image-written");
                    PoolDirectory.rename(tmp, image);
                    failPoints.reach("snapshot.image-renamed");
                    SnapshotMeta meta = new SnapshotMeta(id, name, sourceVolumeId, v.capacityBytes(), v.mode(), v.fsType(),
                            System.currentTimeMillis(), null, v.logicalBlockSize());
                    pool.writeSnapshot(meta);
                    LOG.infof("created snapshot %s of %s (%s)", id, sourceVolumeId, Sizes.format(v.capacityBytes()));
                    return meta;
                } catch (IOException e) {
                    throw EngineException.internal("cannot snapshot " + sourceVolumeId + ": " + e.getMessage(), e);
                } finally {
                    reserved.remove(id);
                }
            }
        }
    }

    @Override
    public void deleteSnapshot(String snapshotId) {
        Ids.requireSnapshotId(snapshotId);
        Optional<SnapshotMeta> s = pool.readSnapshot(snapshotId);
        String group = s.map(SnapshotMeta::groupSnapshotId).orElse(null);
        // A group is restored as one: its members go with it (DeleteVolumeGroupSnapshot), as in the
        // controller role. A member whose group record is gone (a group delete cut short) may go alone.
        if (group != null && pool.readGroupSnapshot(group).isPresent()) {
            throw EngineException.precondition("snapshot " + snapshotId + " is a member of group snapshot " + group
                    + "; delete the group snapshot");
        }
        deleteSnapshotOf(snapshotId);
    }

    private void deleteSnapshotOf(String snapshotId) {
        try (VolumeLocks.Held h = locks.tryAcquire(snapshotId)) {
            pool.deleteSnapshot(snapshotId);
        }
    }

    @Override
    public Optional<SnapshotMeta> snapshot(String snapshotId) {
        return Ids.isSnapshotId(snapshotId) ? pool.readSnapshot(snapshotId) : Optional.empty();
    }

    @Override
    public List<SnapshotMeta> snapshots() {
        return pool.listSnapshots();
    }

    // ---- capacity ---------------------------------------------------------------------------

    /** An admitted create, expansion or snapshot: its size (host space it may take) and its charge against the cap. */
    private record InFlight(long bytes, long charged) {
        InFlight plus(InFlight o) {
            return new InFlight(bytes + o.bytes, charged + o.charged);
        }
    }

    /**
     * The pool's space as {@link CapacityPolicy} counts it. Images are sparse, so the host's free
     * space shrinks as volumes fill; counting the unwritten part of every volume as taken means a
     * volume never finds the host full before itself (a full host under a loop device is an I/O
     * error inside the volume's filesystem). Snapshot images never grow and count only with what they hold.
     */
    @Override
    public PoolCapacity capacity() {
        List<VolumeMeta> vols = pool.listVolumes();
        long thin = 0;
        long thickBytes = 0;
        for (VolumeMeta v : vols) {
            if (v.mutable().thick()) {
                thickBytes += v.capacityBytes();
            } else {
                thin += v.capacityBytes();
            }
        }
        long inFlight = inFlightBytes();
        long promised = unwrittenBytes(vols) + inFlight;
        long hostFree;
        long hostSize;
        try {
            java.nio.file.FileStore host = Files.getFileStore(pool.root()); // one statvfs for both figures
            hostFree = host.getUsableSpace();
            hostSize = host.getTotalSpace();
        } catch (IOException e) {
            throw EngineException.internal("cannot stat the pool's filesystem: " + e.getMessage(), e);
        }
        return policy.evaluate(new CapacityPolicy.Usage(thin, thickBytes, copiesBytes(), inFlight, inFlightCharged(),
                hostFree, promised, hostSize));
    }

    /** What the pool's full copies hold: its snapshots, and the transfers' copies while they last ({@link #transferCopy}). */
    private long copiesBytes() {
        return pool.snapshotBytes() + pool.transferCopyBytes();
    }

    private long inFlightBytes() {
        long inFlight = 0;
        for (InFlight r : reserved.values()) {
            inFlight += r.bytes();
        }
        return inFlight;
    }

    private long inFlightCharged() {
        long charged = 0;
        for (InFlight r : reserved.values()) {
            charged += r.charged();
        }
        return charged;
    }

    /** How much the volumes' sparse images may still grow on the host: capacity minus blocks in use. */
    private long unwrittenBytes(List<VolumeMeta> vols) {
        if (vols.isEmpty()) {
            return 0;
        }
        List<String> cmd = new ArrayList<>(List.of("stat", "--format=%b %B"));
        for (VolumeMeta v : vols) {
            cmd.add(pool.volumeImage(v.id()).toString());
        }
        CommandRunner.Result r = runner.exec(cmd.toArray(String[]::new));
        String[] lines = r.stdout().split("\n");
        long sum = 0;
        for (int i = 0, line = 0; i < vols.size(); i++) {
            long inUse = 0;
            if (line < lines.length && !lines[line].isBlank()) {
                String[] f = lines[line++].trim().split(" ");
                inUse = Long.parseLong(f[0]) * Long.parseLong(f[1]);
            }
            sum += Math.max(0, vols.get(i).capacityBytes() - inUse);
        }
        return sum;
    }

    private long hostFreeBytes() {
        try {
            return Files.getFileStore(pool.root()).getUsableSpace();
        } catch (IOException e) {
            throw EngineException.internal("cannot stat the pool's filesystem: " + e.getMessage(), e);
        }
    }


    /**
     * Admits bytes for id against the pool and the host, or refuses with RESOURCE_EXHAUSTED; thick
     * (a thick volume, a snapshot, a thin volume turning thick) is charged in full against the cap,
     * thin at 1/overcommit. What existing volumes may still write is at most their full capacity,
     * and a charge at most the full size, so when the request fits even if every volume were still
     * empty and charged in full, it fits: admitted without measuring the images (a `stat` over
     * every image, O(n) per create). Otherwise the exact rule decides.
     */
    private void reserve(String id, long bytes, boolean thickCharge) {
        reserve(id, new InFlight(bytes, policy.charge(bytes, thickCharge)), thickCharge);
    }

    private void reserve(String id, InFlight req, boolean thickCharge) {
        synchronized (admission) {
            long volumeBytes = pool.volumeBytes();
            long capRoomAtLeast = policy.capacityBytes() - volumeBytes - copiesBytes() - inFlightCharged();
            long hostRoomAtLeast = hostFreeBytes() - policy.hostReserveBytes() - volumeBytes - inFlightBytes();
            if (req.charged() <= capRoomAtLeast && req.bytes() <= hostRoomAtLeast) {
                reserved.merge(id, req, InFlight::plus);
                return;
            }
            PoolCapacity c = capacity();
            long hostRoom = c.hostFreeBytes() - c.hostReserveBytes() - c.hostPromisedBytes();
            if (req.bytes() > hostRoom || req.charged() > c.totalBytes() - c.chargedBytes()) {
                String bound = req.bytes() > hostRoom
                        ? "the host filesystem under " + pool.root() + " has " + Sizes.format(c.hostFreeBytes()) + " free, of which "
                                + (c.hostReserveBytes() > 0 ? Sizes.format(c.hostReserveBytes()) + " is the host's reserve and " : "")
                                + Sizes.format(c.hostPromisedBytes()) + " is promised to existing volumes"
                        : "pool capacity " + Sizes.format(c.totalBytes()) + " with " + Sizes.format(c.chargedBytes()) + " charged"
                                + (c.thinOvercommit() > 1 ? " (thin volumes at 1/" + CapacityPolicy.format(c.thinOvercommit()) + " of their size, "
                                        + Sizes.format(c.allocatedBytes()) + " allocated)" : " (allocated)");
                String what = req.bytes() == 0 ? "a charge of " + Sizes.format(req.charged()) : Sizes.format(req.bytes());
                throw EngineException.exhausted("not enough space on node " + nodeId + " for " + what + ": " + bound + "; "
                        + Sizes.format(c.available(thickCharge)) + " available for " + (thickCharge ? "thick" : "thin") + " volumes");
            }
            reserved.merge(id, req, InFlight::plus);
        }
    }

    // ---- transfers' copies --------------------------------------------------------------------

    /**
     * The point-in-time copy of a volume that a transfer reads (a cross-node clone, issue 35), made
     * as a same-node clone makes its copy: quiesced (a mounted filesystem frozen for the copy, an
     * attached device flushed), reflinked where the host can. A transfer that read the live image
     * would see a volume in use change under it: its digest would not match, or a quiet moment
     * would give a copy without what the volume's filesystem still held in memory. The copy stays
     * until {@link #dropTransferCopy} (its LoopTransfer is gone), so a transfer resumed after
     * either side's restart reads the same content. Idempotent: the copy made first is the one.
     *
     * <p>Charged as a snapshot is, being one while it lasts: in full against the pool's cap and the
     * host's room, admitted before it is made (RESOURCE_EXHAUSTED when it does not fit, nothing
     * written), so that a copy never takes host space promised to the pool's thin volumes, whose
     * writes would then fail inside their filesystems.
     */
    public Path transferCopy(String volumeId, String transferId) {
        Path image = pool.transferCopyImage(transferId);
        if (Files.isRegularFile(image)) {
            return image;
        }
        try (VolumeLocks.Held h = locks.acquireWaiting(volumeId, SAME_NAME_WAIT_MILLIS)) {
            if (Files.isRegularFile(image)) {
                return image;
            }
            VolumeMeta v = pool.readVolume(volumeId)
                    .orElseThrow(() -> EngineException.notFound("source volume " + volumeId + " does not exist"));
            String charge = "transfer-copy/" + transferId; // not an ID of the pool: no clash in the reservations
            reserve(charge, v.capacityBytes(), true);
            try {
                Files.createDirectories(image.getParent());
                Path tmp = PoolDirectory.tempOf(image);
                Files.deleteIfExists(tmp);
                Path source = pool.volumeImage(volumeId);
                quiesced(source, () -> copyImage(source, tmp, v.capacityBytes(), false));
                PoolDirectory.rename(tmp, image);
            } finally {
                reserved.remove(charge); // from here the committed copy counts itself (copiesBytes)
            }
            LOG.infof("transfer %s reads a copy of volume %s made at %s", transferId, volumeId, java.time.Instant.now());
            return image;
        } catch (IOException e) {
            throw EngineException.internal("cannot copy volume " + volumeId + " for transfer " + transferId + ": " + e.getMessage(), e);
        }
    }

    /** The transfers with a copy on this node ({@link #transferCopy}). */
    public java.util.Set<String> transferCopies() {
        try {
            return pool.transferCopies();
        } catch (IOException e) {
            throw EngineException.internal("cannot list " + pool.transfersDir() + ": " + e.getMessage(), e);
        }
    }

    /** Deletes a transfer's copy (its transfer ended or was given up); nothing when there is none. */
    public void dropTransferCopy(String transferId) {
        try {
            if (pool.deleteTransferCopy(transferId)) {
                LOG.infof("transfer %s ended: its copy of the source is deleted", transferId);
            }
        } catch (IOException e) {
            throw EngineException.internal("cannot delete the copy of transfer " + transferId + ": " + e.getMessage(), e);
        }
    }

    /**
     * Deletes the partial image and the progress of a fetch into volume ID that nothing goes on with
     * (node/NodeRole decides that: no LoopVolume of this node names the volume and no LoopTransfer
     * authorises the transfer to it). Not while the volume is locked (a fetch of it running: false,
     * the next round looks again), and never for a committed volume (its files are its own, and
     * DeleteVolume removes a progress left beside them). True when something was deleted.
     */
    public boolean dropAbandonedFetch(String volumeId) {
        Ids.requireVolumeId(volumeId);
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            if (pool.readVolume(volumeId).isPresent() || !pool.deletePartialFetch(volumeId)) {
                return false;
            }
            LOG.infof("transfer %s: its volume's object is gone and no LoopTransfer authorises it any more: the partial image and the "
                    + "progress of its fetch are deleted (a CreateVolume asked again starts it over)", volumeId);
            return true;
        } catch (EngineException e) {
            if (e.kind() == EngineException.Kind.ABORTED) {
                return false; // locked: a fetch or a delete of it runs
            }
            throw e;
        } catch (IOException e) {
            throw EngineException.internal("cannot delete the partial fetch of volume " + volumeId + ": " + e.getMessage(), e);
        }
    }

    // ---- copies -----------------------------------------------------------------------------

    private interface IoAction {
        void run() throws IOException;
    }

    /**
     * Runs a copy of a volume's image while the volume is consistent on disk: a mounted
     * filesystem is frozen (fsfreeze) for the copy, an attached block device has its buffers
     * flushed first. A volume that is not attached is consistent as it is.
     */
    private void quiesced(Path image, IoAction copy) throws IOException {
        Optional<String> dev = loops.find(image);
        if (dev.isEmpty()) {
            copy.run();
            return;
        }
        String mm = Mounter.majorMinor(Path.of(dev.get()));
        Optional<MountTable.Entry> mounted = MountTable.read().ofDevice(mm).stream().findFirst();
        if (mounted.isEmpty()) {
            runner.run("blockdev", "--flushbufs", dev.get());
            copy.run();
            return;
        }
        String mp = mounted.get().mountPoint();
        runner.run("fsfreeze", "--freeze", mp);
        try {
            copy.run();
        } finally {
            runner.run("fsfreeze", "--unfreeze", mp);
        }
    }

    /**
     * Runs copies of several images at one instant: every mounted filesystem among them frozen
     * before the first copy, every one thawed after the last, whatever failed (a frozen
     * filesystem blocks its writers until it is thawed); attached unmounted devices are flushed.
     */
    private void quiescedTogether(List<Path> images, IoAction copy) throws IOException {
        List<String> frozen = new ArrayList<>();
        MountTable mounts = MountTable.read();
        try {
            for (Path image : images) {
                Optional<String> dev = loops.find(image);
                if (dev.isEmpty()) {
                    continue;
                }
                Optional<MountTable.Entry> mounted = mounts.ofDevice(Mounter.majorMinor(Path.of(dev.get()))).stream().findFirst();
                if (mounted.isEmpty()) {
                    runner.run("blockdev", "--flushbufs", dev.get());
                } else {
                    runner.run("fsfreeze", "--freeze", mounted.get().mountPoint());
                    frozen.add(mounted.get().mountPoint());
                }
            }
            copy.run();
        } finally {
            RuntimeException thawFailed = null;
            for (int i = frozen.size() - 1; i >= 0; i--) {
                try {
                    runner.run("fsfreeze", "--unfreeze", frozen.get(i));
                } catch (RuntimeException e) {
                    LOG.errorf("cannot thaw %s: %s", frozen.get(i), e.getMessage());
                    thawFailed = e;
                }
            }
            if (thawFailed != null) {
                throw thawFailed;
            }
        }
    }

    /**
     * Copies an image (reflink where the host filesystem can, sparse otherwise), grows it to size,
     * fsyncs it. The destination is created 0600 first: cp writes into an existing file and keeps
     * its mode, where a file cp created would get the source's mode less the umask.
     *
     * @param ownBlocks a thick volume is the source or the destination: a full copy, never a reflink.
     *        Blocks a thick image shares with another file are allocated, but a write to them needs a
     *        new block (copy on write), which a full host filesystem refuses: the thick promise would
     *        be void from the snapshot on (seen on xfs: a thick image's writes failed with ENOSPC
     *        after a reflinked snapshot on a full host). The copy costs what it costs on a host
     *        without reflinks, and a live source stays frozen meanwhile, as it does there.
     */
    private void copyImage(Path from, Path to, long size, boolean ownBlocks) throws IOException {
        PoolModes.createPrivateFile(to);
        runner.run("cp", ownBlocks ? "--reflink=never" : "--reflink=auto", "--sparse=always", from.toString(), to.toString());
        PoolDirectory.growSparse(to, size);
        try (FileChannel ch = FileChannel.open(to, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }
}
