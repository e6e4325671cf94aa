package io.loopcsi.engine;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jboss.logging.Logger;

/**
 * The node side of the engine: makes a pool volume usable on this machine. Staging attaches the
 * image to a loop device (find-or-attach: one read-write device per image, ever), makes a filesystem only
 * on a blank device, and mounts it at the staging path (a thick volume's image allocated whole
 * again, see {@link ThickAllocation}); publishing bind-mounts the staged
 * filesystem, or the device node for block volumes, at the target path. Every step first reads
 * the mount table, so a repeated call finds its work done and succeeds. Nothing is detached or
 * unmounted except by an explicit unstage/unpublish.
 */
public class NodeVolumes {

    private static final Logger LOG = Logger.getLogger(NodeVolumes.class);

    private final PoolDirectory pool;
    private final LoopDevices loops;
    private final Mounter mounter;
    private final Filesystems filesystems;
    private final VolumeLocks locks;
    private final ThickAllocation thick;
    private final SectorSizes sectors;

    /**
     * @param thick the node's keeper of thick allocations, shared with the {@link VolumeEngine}: a
     *        thick volume is allocated whole again at every stage and expansion
     * @param sectors the pool's sector sizes, shared with the {@link VolumeEngine} (one probe per pool)
     */
    public NodeVolumes(PoolDirectory pool, LoopDevices loops, Mounter mounter, Filesystems filesystems, VolumeLocks locks,
            ThickAllocation thick, SectorSizes sectors) {
        this.sectors = sectors;
        this.thick = thick;
        this.pool = pool;
        this.loops = loops;
        this.mounter = mounter;
        this.filesystems = filesystems;
        this.locks = locks;
    }

    /**
     * @param mode how the CO will use it; must match the volume's mode
     * @param fsType requested filesystem, empty for "the volume's"
     */
    public void stage(String volumeId, Path staging, VolumeMode mode, String fsType, List<String> mountFlags, boolean readOnly) {
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            VolumeMeta recorded = meta(volumeId);
            checkMode(recorded, mode, fsType);
            Path image = pool.volumeImage(volumeId);
            VolumeMeta v = withSectorSize(recorded, image);
            // A block volume staged for a read-only access mode gets a read-only device; a filesystem
            // is protected by its read-only mount instead (and may still need mkfs on first use).
            String dev = loops.findOrAttach(image, readOnly && v.mode() == VolumeMode.BLOCK, v.mutable().directIo(), v.logicalBlockSize());
            if (v.mode() == VolumeMode.BLOCK) {
                thick.keep(v); // a block volume is staged once its loop device exists
                return;
            }
            String mm = Mounter.majorMinor(Path.of(dev));
            Optional<MountTable.Entry> at = MountTable.read().at(staging);
            if (at.isPresent()) {
                if (at.get().majorMinor().equals(mm)) {
                    growRestored(v, dev, staging, readOnly); // a retry finishes what a failed grow left
                    thick.keep(v);
                    return;
                }
                throw EngineException.alreadyExists("staging_target_path " + staging + " already holds another mount (" + at.get().source()
                        + ", " + at.get().fsType() + "); unstage that first");
            }
            Optional<String> found = filesystems.probe(dev);
            if (found.isEmpty()) {
                LOG.infof("making %s on %s for volume %s", v.fsType(), dev, volumeId);
                filesystems.make(dev, v.fsType());
            } else if (!found.get().equals(v.fsType())) {
                throw EngineException.precondition("volume " + volumeId + " should hold " + v.fsType() + " but its device " + dev
                        + " holds " + found.get() + "; refusing to mount or format it");
            }
            createDirectory(staging);
            List<String> options = new ArrayList<>(mountFlags);
            if ("xfs".equals(v.fsType())) {
                options.add("nouuid"); // snapshots and clones carry their source's UUID and must mount beside it
            }
            if (v.mutable().thick()) {
                // last, so it wins over a "discard" among the CO's flags: no hole punched into the image by
                // every delete; an explicit fstrim still can, and ThickAllocation restores what it takes
                options.add("nodiscard");
            }
            if (readOnly) {
                options.add("ro");
            }
            mounter.mount(dev, staging, v.fsType(), options);
            growRestored(v, dev, staging, readOnly);
            thick.keep(v); // a volume used (and trimmed) before this stage gets its blocks back
        }
    }

    /**
     * The volume with its sector size: as recorded, or, for a volume recorded before sizes were
     * ({@link SectorSizes#forRecordedBefore}), decided now and written to its metadata, so that it
     * never changes again (the caller holds the volume's lock).
     */
    private VolumeMeta withSectorSize(VolumeMeta v, Path image) {
        if (SectorSizes.valid(v.logicalBlockSize())) {
            return v;
        }
        VolumeMeta m = v.withLogicalBlockSize(sectors.forRecordedBefore(v, image, loops.find(image)));
        pool.writeVolume(m);
        LOG.infof("volume %s: %d-byte sectors recorded (its metadata predates them)", v.id(), m.logicalBlockSize());
        return m;
    }

    /** A restore or clone may be larger than its source: its filesystem fills the device. */
    private void growRestored(VolumeMeta v, String dev, Path mountPoint, boolean readOnly) {
        if (!readOnly && (v.sourceSnapshotId() != null || v.sourceVolumeId() != null)) {
            filesystems.grow(dev, mountPoint, v.fsType());
        }
    }

    public void unstage(String volumeId, Path staging) {
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            meta(volumeId);
            Path image = pool.volumeImage(volumeId);
            MountTable table = MountTable.read();
            Optional<String> dev = loops.find(image);
            Optional<MountTable.Entry> at = table.at(staging);
            if (dev.isEmpty()) {
                if (at.isPresent()) {
                    throw EngineException.precondition("staging_target_path " + staging + " holds a mount that is not volume " + volumeId
                            + " (" + at.get().source() + "); not touching it");
                }
                return; // already unstaged
            }
            String mm = Mounter.majorMinor(Path.of(dev.get()));
            List<String> users = new ArrayList<>();
            for (MountTable.Entry e : table.ofDevice(mm)) {
                if (!e.mountPoint().equals(staging.toString())) {
                    users.add(e.mountPoint());
                }
            }
            users.addAll(blockBindsOf(table, loops.findAll(image)));
            if (!users.isEmpty()) {
                throw EngineException.precondition("volume " + volumeId + " is still published at " + String.join(", ", users)
                        + "; unpublish it first");
            }
            if (at.isPresent()) {
                if (!at.get().majorMinor().equals(mm)) {
                    throw EngineException.precondition("staging_target_path " + staging + " holds a mount that is not volume " + volumeId);
                }
                mounter.unmount(staging);
            }
            for (String d : loops.findAll(image)) {
                if (!d.equals(dev.get())) {
                    loops.detach(d); // a read-only companion no target is bound to (a publish interrupted before its bind)
                }
            }
            loops.detach(dev.get());
            LOG.debugf("unstaged %s from %s (%s)", volumeId, staging, dev.get());
        }
    }

    public void publish(String volumeId, Path staging, Path target, VolumeMode mode, String fsType, List<String> mountFlags,
            boolean readOnly) {
        publish(volumeId, staging, target, mode, fsType, mountFlags, readOnly, false);
    }

    /**
     * @param singleWriter SINGLE_NODE_SINGLE_WRITER: refused (FAILED_PRECONDITION) while the volume
     *        is published at another target, as the spec's second-publish table asks
     */
    public void publish(String volumeId, Path staging, Path target, VolumeMode mode, String fsType, List<String> mountFlags,
            boolean readOnly, boolean singleWriter) {
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            VolumeMeta v = meta(volumeId);
            checkMode(v, mode, fsType);
            String dev = loops.find(pool.volumeImage(volumeId)).orElseThrow(() -> EngineException.precondition(
                    "volume " + volumeId + " is not staged on this node: call NodeStageVolume first"));
            MountTable table = MountTable.read();
            List<String> flags = MountFlags.forBind(mountFlags, readOnly);
            Optional<MountTable.Entry> existing = table.at(target);
            if (v.mode() == VolumeMode.BLOCK) {
                publishBlock(v, dev, table, existing, target, flags, readOnly, singleWriter);
                return;
            }
            String mm = Mounter.majorMinor(Path.of(dev));
            Optional<MountTable.Entry> staged = table.at(staging);
            if (staged.isEmpty() || !staged.get().majorMinor().equals(mm)) {
                throw EngineException.precondition("volume " + volumeId + " is not staged at " + staging + ": call NodeStageVolume first");
            }
            if (existing.isPresent()) {
                requireSame(existing.get(), existing.get().majorMinor().equals(mm), readOnly, volumeId, target);
                return;
            }
            if (singleWriter) {
                List<String> others = new ArrayList<>();
                for (MountTable.Entry e : table.ofDevice(mm)) {
                    if (!e.mountPoint().equals(staged.get().mountPoint())) {
                        others.add(e.mountPoint());
                    }
                }
                requireNoOtherTarget(volumeId, others, target);
            }
            createDirectory(target);
            mounter.bind(staging, target, flags);
        }
    }

    /**
     * A block volume is published by bind-mounting a device node at the target. A read-only publish
     * of a volume staged read-write (a pod that mounts an RWO claim readOnly: Kubernetes allows it
     * for any claim) gets the volume's read-only companion device (LoopDevices), attached on the
     * first such publish and detached with the last (unpublish); the kernel ignores a read-only
     * bind mount for writes through a device node, so only such a device keeps the pod from writing.
     */
    private void publishBlock(VolumeMeta v, String dev, MountTable table, Optional<MountTable.Entry> existing, Path target,
            List<String> flags, boolean readOnly, boolean singleWriter) {
        Path image = pool.volumeImage(v.id());
        List<String> devs = loops.findAll(image);
        if (existing.isPresent()) {
            long at = Mounter.rdev(target);
            requireSame(existing.get(), devs.stream().anyMatch(d -> Mounter.rdev(Path.of(d)) == at), readOnly, v.id(), target);
            return;
        }
        if (singleWriter) {
            requireNoOtherTarget(v.id(), blockBindsOf(table, devs), target);
        }
        createFile(target);
        String source = dev;
        if (readOnly && !loops.readOnly(dev)) {
            source = loops.readOnlyCompanion(image)
                    .orElseGet(() -> loops.attachReadOnlyCompanion(image, v.mutable().directIo(), loops.logicalBlockSize(dev)));
            LOG.debugf("read-only publish of %s at %s through %s", v.id(), target, source);
        }
        try {
            mounter.bind(Path.of(source), target, flags);
        } catch (RuntimeException e) {
            releaseCompanion(image, MountTable.read());
            throw e;
        }
    }

    /** Detaches the read-only companion of a block volume once no target is bound to it. */
    private void releaseCompanion(Path image, MountTable table) {
        Optional<String> companion = loops.readOnlyCompanion(image);
        if (companion.isPresent() && blockBindsOf(table, List.of(companion.get())).isEmpty()) {
            loops.detach(companion.get());
        }
    }

    private static void requireNoOtherTarget(String volumeId, List<String> published, Path target) {
        List<String> others = published.stream().filter(p -> !p.equals(target.toString())).toList();
        if (!others.isEmpty()) {
            throw EngineException.precondition("volume " + volumeId + " is already published at " + String.join(", ", others)
                    + " and SINGLE_NODE_SINGLE_WRITER allows one target; unpublish it there first");
        }
    }

    private static void requireSame(MountTable.Entry e, boolean sameDevice, boolean readOnly, String volumeId, Path target) {
        if (!sameDevice) {
            throw EngineException.alreadyExists("target_path " + target + " already holds another mount (" + e.source() + ")");
        }
        if (e.readOnly() != readOnly) {
            throw EngineException.alreadyExists("volume " + volumeId + " is already published at " + target + " "
                    + (e.readOnly() ? "read-only" : "read-write") + "; unpublish it to change that");
        }
    }

    public void unpublish(String volumeId, Path target) {
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            meta(volumeId);
            Optional<MountTable.Entry> at = MountTable.read().at(target);
            if (at.isEmpty() && !Files.exists(target)) {
                return;
            }
            Path image = pool.volumeImage(volumeId);
            List<String> devs = loops.findAll(image);
            if (at.isPresent()) {
                boolean ours = devs.stream().anyMatch(d -> at.get().majorMinor().equals(Mounter.majorMinor(Path.of(d)))
                        || Mounter.rdev(target) == Mounter.rdev(Path.of(d)));
                if (!ours) {
                    throw EngineException.precondition("target_path " + target + " holds a mount that is not volume " + volumeId + " ("
                            + at.get().source() + "); not touching it");
                }
                mounter.unmount(target);
                if (devs.size() > 1) {
                    releaseCompanion(image, MountTable.read());
                }
            }
            try {
                Files.deleteIfExists(target);
            } catch (DirectoryNotEmptyException e) {
                LOG.warnf("left %s in place: it is not empty after unmounting volume %s", target, volumeId);
            } catch (IOException e) {
                throw EngineException.internal("cannot remove " + target + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * Usage and condition of the volume where it is staged or published. NOT_FOUND when the volume
     * is not at volumePath (the spec's "volume does not exist on volume_path"): not staged, or the
     * path is not its mount (filesystem) or its device node (block). A volume whose backing file
     * is gone is reported with an abnormal condition.
     */
    public VolumeStats stats(String volumeId, Path volumePath) {
        VolumeMeta v = meta(volumeId);
        Path image = pool.volumeImage(volumeId);
        if (!Files.exists(image)) {
            return new VolumeStats(0, 0, 0, -1, -1, Condition.abnormal("backing file " + image + " is missing"));
        }
        String dev = loops.find(image).orElseThrow(() -> EngineException.notFound("volume " + volumeId
                + " is not staged on this node (no loop device holds " + image + "), so it is not at " + volumePath));
        if (v.mode() == VolumeMode.BLOCK) {
            long at = Mounter.rdev(volumePath);
            if (loops.findAll(image).stream().noneMatch(d -> Mounter.rdev(Path.of(d)) == at)) {
                throw EngineException.notFound("volume " + volumeId + " is not at " + volumePath + ": its device is " + dev);
            }
            return new VolumeStats(loops.sizeBytes(dev), -1, -1, -1, -1, loops.conditionOf(dev, v, thick.condition(v)));
        }
        Optional<MountTable.Entry> at = MountTable.read().at(volumePath);
        if (at.isEmpty() || !at.get().majorMinor().equals(Mounter.majorMinor(Path.of(dev)))) {
            throw EngineException.notFound("volume " + volumeId + " is not mounted at " + volumePath);
        }
        Filesystems.Usage u = filesystems.usage(volumePath);
        return new VolumeStats(u.totalBytes(), u.availableBytes(), u.usedBytes(), u.totalInodes(), u.freeInodes(),
                loops.conditionOf(dev, v, thick.condition(v)));
    }

    /** Refreshes the loop device's size from the grown image, then grows the filesystem; returns the device size. */
    public long expand(String volumeId, Path volumePath) {
        try (VolumeLocks.Held h = locks.tryAcquire(volumeId)) {
            VolumeMeta v = meta(volumeId);
            String dev = loops.find(pool.volumeImage(volumeId)).orElseThrow(() -> EngineException.precondition(
                    "volume " + volumeId + " is not staged on this node; it grows when it is staged again"));
            loops.refreshCapacity(dev);
            if (v.mode() == VolumeMode.FILESYSTEM) {
                String mm = Mounter.majorMinor(Path.of(dev));
                Optional<MountTable.Entry> at = MountTable.read().at(volumePath);
                if (at.isEmpty() || !at.get().majorMinor().equals(mm)) {
                    throw EngineException.notFound("volume_path " + volumePath + " is not a mount of volume " + volumeId);
                }
                filesystems.grow(dev, volumePath, v.fsType());
            }
            thick.keep(v); // the grown part too, whatever resizing the filesystem wrote or zeroed
            return loops.sizeBytes(dev);
        }
    }

    /** The volume's metadata; NOT_FOUND when this node has no such volume. */
    public VolumeMeta volume(String volumeId) {
        return meta(volumeId);
    }

    /** For RPCs where a capability the volume cannot meet is INVALID_ARGUMENT (NodeExpandVolume). */
    public void requireCapability(String volumeId, VolumeMode mode, String fsType) {
        try {
            checkMode(meta(volumeId), mode, fsType);
        } catch (EngineException e) {
            if (e.kind() == EngineException.Kind.FAILED_PRECONDITION) {
                throw EngineException.invalid(e.getMessage());
            }
            throw e;
        }
    }

    private VolumeMeta meta(String volumeId) {
        return pool.readVolume(Ids.requireVolumeId(volumeId))
                .orElseThrow(() -> EngineException.notFound("volume " + volumeId + " does not exist on this node"));
    }

    /** A capability the volume cannot meet: the spec's "Exceeds capabilities" of NodeStage and NodePublish. */
    private static void checkMode(VolumeMeta v, VolumeMode mode, String fsType) {
        if (v.mode() != mode) {
            throw EngineException.precondition("volume_capability: volume " + v.id() + " is a " + v.mode() + " volume, not " + mode);
        }
        if (mode == VolumeMode.FILESYSTEM && !fsType.isEmpty() && !fsType.equals(v.fsType())) {
            throw EngineException.precondition("volume_capability: volume " + v.id() + " holds " + v.fsType() + ", not " + fsType);
        }
    }

    /** Mount points of bind mounts of these device nodes themselves (published block volumes). */
    private static List<String> blockBindsOf(MountTable table, List<String> devs) {
        List<String> out = new ArrayList<>();
        for (String dev : devs) {
            String leaf = "/" + Path.of(dev).getFileName();
            long rdev = Mounter.rdev(Path.of(dev));
            for (MountTable.Entry e : table.entries()) {
                if (e.root().endsWith(leaf) && Mounter.rdev(Path.of(e.mountPoint())) == rdev) {
                    out.add(e.mountPoint());
                }
            }
        }
        return out;
    }

    private static void createDirectory(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw EngineException.internal("cannot create directory " + dir + ": " + e.getMessage(), e);
        }
    }

    private static void createFile(Path file) {
        try {
            Files.createDirectories(file.getParent());
            if (!Files.exists(file)) {
                Files.createFile(file);
            } else if (Files.isDirectory(file)) {
                throw EngineException.precondition("target_path " + file + " is a directory; a block volume is published on a file");
            }
        } catch (IOException e) {
            throw EngineException.internal("cannot create " + file + ": " + e.getMessage(), e);
        }
    }
}
