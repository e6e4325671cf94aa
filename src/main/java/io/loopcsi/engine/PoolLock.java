package io.loopcsi.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * One pool directory, one owner: an exclusive advisory lock on {@code DIR/loopcsi.lock}, held
 * for the life of the process. It is a kernel record lock (fcntl, what {@link FileChannel#tryLock()}
 * takes on Linux; {@code lslocks} shows it), so any death of the holder, kill -9 included, releases
 * it: a crash never leaves a stale lock. The holder writes its PID into the file so that the next
 * process can say who holds it (the PID as seen in the holder's PID namespace).
 *
 * <p>Two ways to take it: {@link #acquire(Path)} fails at once (standalone: a second driver on
 * the same directory is a mistake to report), {@link #acquire(Path, Duration, Consumer)} waits,
 * with a bound, and says it is waiting (the node role during an update, while the old pod is
 * still stopping).
 *
 * <p>Record locks belong to the process and are dropped when the process closes ANY descriptor
 * of the file, so nothing else in this process may open the lock file; a second acquisition in
 * the same process is refused from {@link #HELD} before the file is opened. {@link #held(Path)}
 * hands a lock the launcher took to the engine.
 */
public final class PoolLock implements AutoCloseable {

    /** The lock file's name inside the pool directory. */
    public static final String FILE = "loopcsi.lock";
    private static final Duration FIRST_POLL = Duration.ofMillis(100);
    private static final Duration MAX_POLL = Duration.ofSeconds(1);
    private static final Duration SAY_STILL_WAITING = Duration.ofSeconds(10);
    /**
     * Locks this process holds, by the pool directory's file key (device and inode), so that one
     * directory reached by two paths (a bind mount) is still one pool.
     */
    private static final Map<Object, PoolLock> HELD = new ConcurrentHashMap<>();

    private final Path dir;
    private final Object key;
    private final Object fileKey;
    private final FileChannel channel;
    private final FileLock lock;

    private PoolLock(Path dir, Object key, Object fileKey, FileChannel channel, FileLock lock) {
        this.dir = dir;
        this.key = key;
        this.fileKey = fileKey;
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the lock of the pool directory dir (made 0700 if missing), or throws {@link Locked} at once. */
    public static PoolLock acquire(Path dir) {
        Path root = PoolModes.createPoolRoot(dir);
        return tryLock(root).orElseThrow(() -> new Locked(root, holder(root), false));
    }

    /**
     * Takes the lock, waiting up to bound while another process holds it; says through waiting
     * that it waits (at once, then every 10 s). Throws {@link Locked} when the bound passes.
     */
    public static PoolLock acquire(Path dir, Duration bound, Consumer<String> waiting) throws InterruptedException {
        Path root = PoolModes.createPoolRoot(dir);
        long start = System.nanoTime();
        long deadline = start + bound.toNanos();
        long nextSay = start;
        long poll = FIRST_POLL.toMillis();
        while (true) {
            Optional<PoolLock> l = tryLock(root);
            if (l.isPresent()) {
                if (nextSay != start) {
                    waiting.accept("pool " + root + ": lock taken after waiting " + seconds(System.nanoTime() - start));
                }
                return l.get();
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                throw new Locked(root, holder(root), true);
            }
            if (now - nextSay >= 0) {
                waiting.accept("pool " + root + " is locked by " + holder(root).map(p -> "PID " + p).orElse("another process")
                        + "; waiting for it (" + seconds(now - start) + " of " + seconds(bound.toNanos()) + ")");
                nextSay = now + SAY_STILL_WAITING.toNanos();
            }
            Thread.sleep(Math.min(poll, Math.max(1, (deadline - now) / 1_000_000)));
            poll = Math.min(poll * 2, MAX_POLL.toMillis());
        }
    }

    /** The lock this process holds on dir, if any (for example taken by the launcher before the engine was made). */
    public static Optional<PoolLock> held(Path dir) {
        synchronized (HELD) {
            try {
                return live(dir);
            } catch (IOException e) {
                return Optional.empty();
            }
        }
    }

    /**
     * The lock this process holds on dir, if its lock file is still the one in dir; an entry
     * whose file is gone (the directory was deleted, and its inode may be reused) is dropped.
     */
    private static Optional<PoolLock> live(Path dir) throws IOException {
        PoolLock l = HELD.get(key(dir));
        if (l == null) {
            return Optional.empty();
        }
        Object fileKey;
        try {
            fileKey = key(dir.resolve(FILE)); // stat, never open: opening and closing the file would drop the lock
        } catch (NoSuchFileException e) {
            fileKey = null;
        }
        if (l.fileKey.equals(fileKey)) {
            return Optional.of(l);
        }
        l.close();
        return Optional.empty();
    }

    /** The pool directory (its real path). */
    public Path dir() {
        return dir;
    }

    /** Releases the lock (the kernel does so at exit anyway). */
    @Override
    public void close() {
        if (HELD.remove(key, this)) {
            try {
                channel.close(); // releases the lock
            } catch (IOException ignored) {
                // closing drops the lock whatever else fails
            }
        }
    }

    /** Releases every lock this process holds on a pool under dir (tests that make many pools in one JVM). */
    static void releaseAllUnder(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        HELD.values().stream().filter(l -> l.dir.startsWith(abs)).toList().forEach(PoolLock::close);
    }

    private static Object key(Path dir) throws IOException {
        return Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
    }

    private static Optional<PoolLock> tryLock(Path root) {
        synchronized (HELD) {
            Object key;
            try {
                if (live(root).isPresent()) {
                    return Optional.empty();
                }
                key = key(root);
            } catch (IOException e) {
                throw new IllegalStateException("cannot lock pool directory " + root + ": " + e.getMessage(), e);
            }
            Path file = root.resolve(FILE);
            FileChannel ch = null;
            try {
                ch = FileChannel.open(file, java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE),
                        PoolModes.FILE_ATTR);
                FileLock l;
                try {
                    l = ch.tryLock();
                } catch (OverlappingFileLockException e) {
                    l = null;
                }
                if (l == null) {
                    ch.close(); // not ours: closing our descriptor does not touch the holder's lock
                    return Optional.empty();
                }
                ch.truncate(0);
                ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
                ch.force(false);
                PoolLock pl = new PoolLock(root, key, key(file), ch, l);
                HELD.put(key, pl);
                return Optional.of(pl);
            } catch (IOException e) {
                if (ch != null) {
                    try {
                        ch.close();
                    } catch (IOException ignored) {
                        // already failing
                    }
                }
                throw new IllegalStateException("cannot lock pool directory " + root + ": " + e.getMessage(), e);
            }
        }
    }

    /** The PID written by the holder, if the file says one (it may be between truncate and write). */
    static Optional<Long> holder(Path root) {
        if (held(root).isPresent()) {
            return Optional.of(ProcessHandle.current().pid());
        }
        try {
            String s = Files.readString(root.resolve(FILE), StandardCharsets.US_ASCII).strip();
            return s.matches("[0-9]{1,10}") ? Optional.of(Long.parseLong(s)) : Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String seconds(long nanos) {
        return Math.round(nanos / 1e9) + "s";
    }

    /** Another process (or this one) holds the pool: the message says which, and what to do. */
    public static final class Locked extends RuntimeException {

        private final Path dir;

        Locked(Path dir, Optional<Long> pid, boolean waited) {
            super("pool directory " + dir + " is in use by " + pid.map(p -> p == ProcessHandle.current().pid() ? "this process" : "PID " + p)
                    .orElse("another process") + (waited ? " and was not released in time" : "")
                    + "; one pool directory serves one loopcsi process: stop the other one, or give this one another --data-dir");
            this.dir = dir;
        }

        public Path dir() {
            return dir;
        }
    }
}
