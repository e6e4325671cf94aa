package io.loopcsi.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

/**
 * Keeps the image of every thick volume ({@code provisioning=thick}) fully allocated on the host,
 * and says when it could not.
 *
 * <p>Why it must be re-done, not done once: a loop device turns every discard of the filesystem
 * inside it (mkfs, {@code fstrim}, a {@code discard} mount) into {@code fallocate(PUNCH_HOLE)} on
 * its backing file, and a write-zeroes request without "no unmap" into the same; after a hole punch
 * the thick promise (writes never meet a full host filesystem) is void for those blocks.
 *
 * <p>Why not refuse discards on the loop device instead: the only knob is
 * {@code /sys/block/loopN/queue/discard_max_bytes}, and on current kernels (measured on 6.18) a 0
 * written there cannot be raised again: the loop device's discard granularity drops to 0 and every
 * other value is refused with EINVAL, also after a detach, for whatever file is attached to that
 * device number later. Loop devices are host-wide and outlive our volumes, so that would silently
 * take discards from later thin volumes (which reclaim host space by them) and from anyone else on
 * the host. So discards are let through, and the allocation is restored instead:
 * {@code fallocate} (mode 0, no {@code --punch-hole}, no {@code --keep-size} needed as the file is
 * already that long) over the whole image allocates only the holes, never changes a byte of data,
 * and is cheap when nothing is missing (a walk over the file's extents). It runs at stage (mkfs no longer
 * discards, but a restaged volume may have been trimmed while it was used), after every expansion,
 * at ModifyVolume to thick, and in the node's periodic check ({@link #keepAll()}), which bounds how
 * long a trimmed volume stays short. Filesystem volumes are also mounted {@code nodiscard}, so only
 * an explicit {@code fstrim} in the pod can punch holes, never every delete.
 *
 * <p>A restore that fails (the host filesystem is full: someone else took the space the volume's
 * holes had) is remembered for the volume's condition until a later one succeeds. The record lives
 * in memory only: a restarted process runs the periodic check at start and finds it again from the
 * files.
 */
public class ThickAllocation {

    private static final Logger LOG = Logger.getLogger(ThickAllocation.class);

    private final PoolDirectory pool;
    private final CommandRunner runner;
    private final VolumeLocks locks;
    /** The pool's host filesystem refused FALLOC_FL_UNSHARE_RANGE once: it has no reflinks, nothing to unshare. */
    private volatile boolean noUnshare;
    /** Volumes whose last restore failed: why, as the condition says it. */
    private final Map<String, String> lost = new ConcurrentHashMap<>();

    public ThickAllocation(PoolDirectory pool, CommandRunner runner, VolumeLocks locks) {
        this.pool = pool;
        this.runner = runner;
        this.locks = locks;
    }

    /** Bytes of the file's blocks on the host (du, st_blocks × block size). */
    public long allocatedBytes(Path file) {
        String[] f = runner.run("stat", "--format=%b %B", file.toString()).trim().split(" ");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }

    /**
     * Makes [0, size) of an existing file its own blocks, keeping every byte: fallocate mode 0
     * allocates the holes, then {@code xfs_io funshare} (FALLOC_FL_UNSHARE_RANGE) gives the file its
     * own copy of every block it shares with another file through a reflink (a snapshot or clone an
     * earlier version took, or a thin volume's snapshot before the volume turned thick): a shared
     * block is allocated, but a write to it needs a new one (copy on write), which a full host
     * refuses. Where the host filesystem cannot unshare (no reflinks there, so nothing is shared:
     * ext4), that step is skipped from then on. The result is the first failed command's, else the
     * fallocate's (the caller decides what a failure means). The file must exist: fallocate(1)
     * would create a missing one.
     */
    CommandRunner.Result fallocate(Path file, long size) {
        CommandRunner.Result r = runner.exec("fallocate", "--length", Long.toString(size), file.toString());
        if (!r.ok() || noUnshare) {
            return r;
        }
        CommandRunner.Result u = runner.exec("xfs_io", "-c", "funshare 0 " + size, file.toString());
        if (!u.ok() && u.stderr().contains("Operation not supported")) {
            noUnshare = true;
            return r;
        }
        return u.ok() ? r : u;
    }

    /**
     * For a volume whose lock the caller holds: a thick volume's image is allocated again where it
     * has holes; the outcome is recorded for {@link #condition}. A thin volume is left as it is (and
     * any record of it forgotten). Never throws for a failed restore: the volume is still usable,
     * its condition says what is wrong.
     */
    public void keep(VolumeMeta v) {
        if (!v.mutable().thick()) {
            lost.remove(v.id());
            return;
        }
        Path image = pool.volumeImage(v.id());
        if (!Files.isRegularFile(image)) {
            return; // the engine's condition says the backing file is missing
        }
        // Always fallocate, never "only when du says it is short": du counts the host filesystem's own
        // extent blocks too, which can hide a few punched holes.
        long before = allocatedBytes(image);
        CommandRunner.Result r = fallocate(image, v.capacityBytes());
        if (r.ok()) {
            long gained = allocatedBytes(image) - before;
            if (lost.remove(v.id()) != null || gained > 0) {
                LOG.infof("volume %s: allocated %s of its thick image again (the filesystem inside had discarded them)", v.id(),
                        Sizes.format(Math.max(0, gained)));
            }
            return;
        }
        long missing = Math.max(0, v.capacityBytes() - allocatedBytes(image));
        String message = "provisioning=thick: the image of " + v.id() + " lacks blocks on the host filesystem under " + pool.root()
                + " (about " + Sizes.format(missing) + "; the filesystem inside discarded them) and they cannot be allocated again: "
                + r.stderr().strip() + "; writes there fail while the host filesystem is full (free space on it: the node tries "
                + "again at every check)";
        if (!message.equals(lost.put(v.id(), message))) {
            LOG.warnf("volume %s: %s", v.id(), message);
        }
    }

    /**
     * The periodic check: {@link #keep} for every thick volume of the pool, each under its lock. A
     * volume busy with another call is skipped this round (stage, expand and modify restore it
     * themselves). Returns how many thick volumes were checked.
     */
    public int keepAll() {
        int checked = 0;
        for (VolumeMeta listed : pool.listVolumes()) {
            if (!listed.mutable().thick()) {
                lost.remove(listed.id());
                continue;
            }
            try (VolumeLocks.Held h = locks.tryAcquire(listed.id())) {
                Optional<VolumeMeta> v = pool.readVolume(listed.id()); // as committed now, under the lock
                if (v.isPresent()) {
                    keep(v.get());
                    checked++;
                }
            } catch (EngineException e) {
                if (e.kind() != EngineException.Kind.ABORTED) {
                    LOG.warnf("volume %s: cannot check its thick allocation: %s", listed.id(), e.getMessage());
                }
            }
        }
        lost.keySet().removeIf(id -> pool.readVolume(id).isEmpty());
        return checked;
    }

    /** Abnormal when the volume is thick and its last restore failed; else healthy. */
    public Condition condition(VolumeMeta v) {
        String why = v.mutable().thick() ? lost.get(v.id()) : null;
        return why == null ? Condition.HEALTHY : Condition.abnormal(why);
    }
}
