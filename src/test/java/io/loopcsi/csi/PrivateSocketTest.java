package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The socket is bound where no one else can reach it and appears under its name only as 0600 (SecurityIT: under umask 000, as nobody). */
class PrivateSocketTest {

    @TempDir
    Path dir;

    static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void theSocketIsBoundInAPrivateDirectoryAndPublishedAs0600() throws Exception {
        Path sock = dir.resolve("csi.sock");
        try (PrivateSocket ps = PrivateSocket.create(sock); ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            assertEquals(dir, ps.bindPath().getParent().getParent());
            assertEquals("rwx------", mode(ps.bindPath().getParent()));
            server.bind(UnixDomainSocketAddress.of(ps.bindPath()));
            assertFalse(Files.exists(sock, LinkOption.NOFOLLOW_LINKS), "nothing under the public name before publish");
            ps.publish();
            assertEquals("rw-------", mode(sock));
            assertFalse(Files.exists(ps.bindPath().getParent()), "the private directory is gone");
            try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                c.connect(UnixDomainSocketAddress.of(sock));
                assertTrue(c.isConnected());
            }
        }
        assertTrue(Files.exists(sock, LinkOption.NOFOLLOW_LINKS), "close never removes the published socket");
    }

    @Test
    void unpublishRemovesOurSocketButNeverASuccessors() throws Exception {
        Path sock = dir.resolve("csi.sock");
        try (PrivateSocket ours = PrivateSocket.create(sock); ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(ours.bindPath()));
            ours.publish();
            ours.unpublish();
            assertFalse(Files.exists(sock, LinkOption.NOFOLLOW_LINKS));
            ours.unpublish(); // again: nothing to do
        }
        try (PrivateSocket old = PrivateSocket.create(sock); ServerSocketChannel first = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                ServerSocketChannel next = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            first.bind(UnixDomainSocketAddress.of(old.bindPath()));
            old.publish();
            Files.delete(sock); // a successor took the name over (its launcher removed our socket as stale)
            next.bind(UnixDomainSocketAddress.of(sock));
            old.unpublish();
            assertTrue(Files.exists(sock, LinkOption.NOFOLLOW_LINKS), "the successor's socket is left alone");
        }
    }

    @Test
    void publishingNeverReplacesASocketThatAppearedMeanwhile() throws Exception {
        Path sock = dir.resolve("csi.sock");
        try (PrivateSocket ps = PrivateSocket.create(sock); ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(ps.bindPath()));
            other.bind(UnixDomainSocketAddress.of(sock));
            Object inode = Files.getAttribute(sock, "unix:ino");
            IllegalStateException e = assertThrows(IllegalStateException.class, ps::publish);
            assertTrue(e.getMessage().contains("another process serves on it"), e.getMessage());
            assertEquals(inode, Files.getAttribute(sock, "unix:ino"), "the other socket is left in place");
        }
        try (var s = Files.list(dir)) {
            assertEquals(1, s.count(), "closing removed the private directory");
        }
    }

    @Test
    void privateDirectoriesOfDeadProcessesAreRemovedAndLongPathsRefused() throws Exception {
        Path stale = Files.createDirectory(dir.resolve(".lc999999999-1"));
        Files.writeString(stale.resolve("csi.sock"), "");
        Path foreign = Files.createDirectory(dir.resolve(".lcnotours"));
        try (PrivateSocket ps = PrivateSocket.create(dir.resolve("csi.sock"))) {
            assertFalse(Files.exists(stale));
            assertTrue(Files.exists(foreign), "only our own pattern is touched");
        }
        Path deep = dir.resolve("x".repeat(100 - dir.toString().length()) + ".sock");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> PrivateSocket.create(deep));
        assertTrue(e.getMessage().contains("too long"), e.getMessage());
    }
}
