package io.loopcsi.csi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

import jakarta.inject.Singleton;

import io.loopcsi.engine.Ids;
import io.loopcsi.engine.PoolDirectory;

/**
 * Keeps staging and target paths where a CO may put them: under one of the allowed roots
 * (e.g. the kubelet directory), also after following symlinks, and never inside the pool
 * directory, whose files a mount could otherwise hide or expose.
 */
@Singleton
public class PathGuard {

    private final List<Path> roots;
    private final Path pool;

    PathGuard(DriverConfig config, PoolDirectory pool) {
        this.roots = config.allowedRoots().stream().map(PathGuard::real).toList();
        this.pool = pool.root();
    }

    /** Validates field's path as CsiArgs does, then where it really leads. */
    Path check(String field, String value) {
        Path p = CsiArgs.requirePath(field, value);
        Path resolved = resolve(p);
        if (resolved.startsWith(pool)) {
            throw GrpcErrors.invalid(field + ": " + p + " lies inside the pool directory " + pool);
        }
        for (Path root : roots) {
            if (resolved.startsWith(root)) {
                return p;
            }
        }
        throw GrpcErrors.invalid(field + ": " + Ids.quote(value) + (resolved.equals(p) ? "" : " (really " + resolved + ")")
                + " is outside the allowed roots " + roots + " (--allowed-roots)");
    }

    /** The real location of p: its deepest existing ancestor with symlinks resolved, plus the rest. */
    static Path resolve(Path p) {
        Path existing = p;
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return p;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(p)).normalize();
        } catch (IOException e) {
            // a dangling symlink: it leads nowhere we can check
            throw GrpcErrors.invalid(p + " passes through " + existing + ", which cannot be resolved: " + e.getMessage());
        }
    }

    private static Path real(String root) {
        Path p = Path.of(root).toAbsolutePath().normalize();
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p;
        }
    }
}
