package io.loopcsi.operator.status;

import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

import io.loopcsi.operator.api.StoragePool;

/**
 * Two pools must never share a directory on a node: each pool's node plugin owns its backingDir
 * (it recovers what it finds there, counts its capacity, and takes the directory's lock). A pool
 * whose backingDir equals, lies inside, or contains the backingDir of another pool that may run on
 * the same node is refused, before anything is rolled out.
 *
 * <p>Which nodes two pools share: all of them unless their nodeSelectors provably select disjoint
 * sets, which here means one label key that both selectors require with different values.
 * Tolerations and node labels are not looked at (the set of nodes changes; the rule must not).
 *
 * <p>Which pool is refused: the newer one (creationTimestamp, then name), so that a pool that
 * works never stops working because someone added a conflicting one. Directories are compared as
 * written, normalized ({@code /a/./b/} is {@code /a/b}); symbolic links on the nodes cannot be
 * seen from here, and the node plugin's lock on the directory is the last line there.
 *
 * <p>Pure: the reconciler passes every pool it knows.
 */
public final class BackingDirConflict {

    public static final String REASON = "BackingDirConflict";

    private BackingDirConflict() {
    }

    /** A message naming every older pool whose backingDir overlaps pool's on a node both may select; empty when none. */
    public static Optional<String> find(StoragePool pool, Collection<StoragePool> all) {
        Path mine = dir(pool);
        List<StoragePool> older = all.stream()
                .filter(o -> !Objects.equals(o.getMetadata().getName(), pool.getMetadata().getName()))
                .filter(o -> overlaps(mine, dir(o)))
                .filter(o -> mayShareNodes(selector(pool), selector(o)))
                .filter(o -> AGE.compare(o, pool) < 0)
                .sorted(AGE)
                .toList();
        if (older.isEmpty()) {
            return Optional.empty();
        }
        String which = older.stream().map(o -> relation(mine, dir(o)) + "the backingDir of StoragePool " + o.getMetadata().getName())
                .collect(Collectors.joining("; "));
        return Optional.of("backingDir " + mine + " " + which + ", on nodes both pools may run on; a pool's node plugin owns its "
                + "directory, and the older pool keeps it: give this pool another spec.backingDir (or nodeSelectors that share no node)");
    }

    /** Equal, or one inside the other (by whole path elements: /a/b is not inside /a/bc). */
    static boolean overlaps(Path a, Path b) {
        return a.startsWith(b) || b.startsWith(a);
    }

    /** False only when some key is required by both selectors with different values. */
    static boolean mayShareNodes(Map<String, String> a, Map<String, String> b) {
        for (Map.Entry<String, String> e : a.entrySet()) {
            if (b.containsKey(e.getKey()) && !Objects.equals(b.get(e.getKey()), e.getValue())) {
                return false;
            }
        }
        return true;
    }

    /** Older first: creationTimestamp (a pool without one counts as newest), then name. */
    static final Comparator<StoragePool> AGE = Comparator.comparing(BackingDirConflict::created)
            .thenComparing(p -> p.getMetadata().getName());

    private static Instant created(StoragePool p) {
        String ts = p.getMetadata().getCreationTimestamp();
        if (ts == null) {
            return Instant.MAX;
        }
        try {
            return Instant.parse(ts);
        } catch (DateTimeParseException e) {
            return Instant.MAX;
        }
    }

    private static String relation(Path mine, Path other) {
        return mine.equals(other) ? "is also " : (mine.startsWith(other) ? "lies inside " : "contains ") + other + ", ";
    }

    private static Path dir(StoragePool p) {
        return Path.of(p.backingDir()).normalize();
    }

    private static Map<String, String> selector(StoragePool p) {
        Map<String, String> s = p.getSpec() == null ? null : p.getSpec().getNodeSelector();
        return s == null ? Map.of() : s;
    }
}
