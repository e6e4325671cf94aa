package io.loopcsi.csi;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A unix socket that only its owner can connect to (mode 0600), whatever the umask, with no
 * moment at which anyone else could connect.
 *
 * <p>How: bind(2) creates the socket file with 0777 less the umask, and Java cannot set the umask
 * of a running process. So the server binds inside a private directory made beside the socket's
 * path ({@code .lc<pid>-<n>/}, 0700, on the same filesystem): no other user can reach the socket
 * there whatever its mode. {@link #publish()} then sets 0600 and only then gives it its public
 * name, with link(2) (which refuses to replace a file someone else published meanwhile), and
 * removes the private name and directory. A client sees either no socket or a 0600 one. kubelet's
 * plugin watcher sees the new name as a create, as with a direct bind.
 *
 * <p>Use: {@code PrivateSocket s = PrivateSocket.create(path)}; bind the server to
 * {@link #bindPath()}; once it listens, {@link #publish()}; at shutdown {@link #unpublish()}
 * removes the public name (only while it is still this socket), and {@link #close()} the private
 * directory if publishing never happened.
 */
public final class PrivateSocket implements AutoCloseable {

    /** sun_path holds 108 bytes, the terminating NUL included. */
    static final int MAX_PATH_BYTES = 107;
    private static final Pattern PRIVATE_DIR = Pattern.compile("\\.lc([0-9]{1,10})-[0-9]{1,10}");
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private static final List<PrivateSocket> TO_PUBLISH = new CopyOnWriteArrayList<>();

    /**
     * A socket whose server binds at its bindPath() during start-up, to publish once Quarkus
     * has started (cli.Main.Serving), in the order given (the CSI socket before kubelet's registration
     * socket, so that kubelet never finds a plugin whose CSI endpoint is not there yet).
     */
    public static void publishOnStart(PrivateSocket socket) {
        TO_PUBLISH.add(socket);
    }

    /** The sockets to publish once started, in order. */
    public static List<PrivateSocket> toPublish() {
        return TO_PUBLISH;
    }

    /**
     * Makes the socket's directory and removes a stale socket file left by a process that died.
     * A socket that still accepts connections belongs to a running driver, and a path that is not
     * a socket is someone's file: both are refused (IllegalStateException saying why).
     */
    public static void prepare(Path socket) {
        try {
            Files.createDirectories(socket.getParent());
            if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            BasicFileAttributes attrs = Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isOther()) {
                throw new IllegalStateException(socket + " exists and is not a socket; refusing to replace it");
            }
            try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                ch.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException stale) {
                Files.delete(socket);
                return;
            }
            throw new IllegalStateException("another process is serving on " + socket + "; stop it or choose another --endpoint");
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare socket " + socket + ": " + e.getMessage(), e);
        }
    }

    private final Path socket;
    private final Path privateDir;
    private final Path bindPath;
    /** The published socket's inode, so that only our own socket is ever removed. */
    private volatile Object published;

    private PrivateSocket(Path socket, Path privateDir) {
        this.socket = socket;
        this.privateDir = privateDir;
        this.bindPath = privateDir.resolve(socket.getFileName());
    }

    /**
     * Makes the private directory for a socket to be published at socket (whose directory must
     * exist), removing private directories that dead processes left beside it.
     */
    public static PrivateSocket create(Path socket) {
        Path parent = socket.toAbsolutePath().getParent();
        long pid = ProcessHandle.current().pid();
        Path dir = parent.resolve(".lc" + pid + "-" + COUNTER.incrementAndGet());
        PrivateSocket s = new PrivateSocket(socket.toAbsolutePath(), dir);
        int length = s.bindPath.toString().getBytes(StandardCharsets.UTF_8).length;
        if (length > MAX_PATH_BYTES) {
            throw new IllegalStateException("socket path " + socket + " is too long: binding it privately needs " + length
                    + " bytes, a unix socket path has at most " + MAX_PATH_BYTES + "; choose a shorter path");
        }
        try {
            removeLeftovers(parent, pid);
            deleteTree(dir); // a leftover of an earlier process with our PID (PID 1 in a container)
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare socket " + socket + ": " + e.getMessage(), e);
        }
        return s;
    }

    /** Where the server must bind. */
    public Path bindPath() {
        return bindPath;
    }

    /** The public path. */
    public Path socket() {
        return socket;
    }

    /**
     * Gives the bound socket mode 0600 and its public name. Throws IllegalStateException when the
     * socket is not bound, or when a file already has the public name (another server published first).
     */
    public void publish() {
        try {
            Files.setPosixFilePermissions(bindPath, PosixFilePermissions.fromString("rw-------"));
            try {
                Files.createLink(socket, bindPath);
            } catch (FileAlreadyExistsException e) {
                throw new IllegalStateException(socket + " appeared while this driver was starting: another process serves on it; "
                        + "stop it or choose another --endpoint");
            } catch (UnsupportedOperationException | IOException noLink) {
                // a filesystem without hard links: rename (still atomic, checked not to replace)
                Files.move(bindPath, socket);
            }
            published = Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            deleteTree(privateDir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot publish socket " + socket + ": " + e.getMessage(), e);
        }
    }

    /** Removes the public name at shutdown, if it is still the socket this published (not a successor's). */
    public void unpublish() {
        try {
            if (published != null && published.equals(
                    Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey())) {
                Files.delete(socket);
            }
        } catch (IOException ignored) {
            // gone already, or replaced: nothing of ours to remove
        }
    }

    /** Removes the private directory if it is still there. */
    @Override
    public void close() {
        try {
            deleteTree(privateDir);
        } catch (IOException ignored) {
            // the next start beside it removes it
        }
    }

    private static void removeLeftovers(Path parent, long ourPid) throws IOException {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent, ".lc*")) {
            for (Path p : ds) {
                Matcher m = PRIVATE_DIR.matcher(p.getFileName().toString());
                if (m.matches() && Files.isDirectory(p) && !Files.isSymbolicLink(p)) {
                    long pid = Long.parseLong(m.group(1));
                    if (pid != ourPid && ProcessHandle.of(pid).isEmpty()) {
                        deleteTree(p);
                    }
                }
            }
        }
    }

    /** Deletes a private directory and the socket in it (it holds nothing else). */
    private static void deleteTree(Path dir) throws IOException {
        if (!Files.isDirectory(dir) || Files.isSymbolicLink(dir)) {
            return;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                Files.deleteIfExists(p);
            }
        }
        Files.deleteIfExists(dir);
    }
}
