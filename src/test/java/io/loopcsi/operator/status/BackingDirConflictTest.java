package io.loopcsi.operator.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.Pools;

class BackingDirConflictTest {

    static StoragePool pool(String name, String created, String dir, Map<String, String> selector) {
        StoragePool p = Pools.minimal(name);
        p.getMetadata().setCreationTimestamp(created);
        p.getSpec().setBackingDir(dir);
        p.getSpec().setNodeSelector(selector);
        return p;
    }

    static final String T1 = "2026-01-01T00:00:00Z";
    static final String T2 = "2026-01-02T00:00:00Z";

    @Test
    void theNewerOfTwoPoolsOnOneDirectoryIsRefusedAndNamesTheOlder() {
        StoragePool old = pool("old", T1, "/srv/pool", Map.of());
        StoragePool young = pool("young", T2, "/srv/pool/", Map.of());
        List<StoragePool> all = List.of(old, young);
        assertEquals(Optional.empty(), BackingDirConflict.find(old, all), "an existing pool keeps working");
        String m = BackingDirConflict.find(young, all).orElseThrow();
        assertTrue(m.contains("StoragePool old") && m.contains("/srv/pool"), m);
    }

    @Test
    void nestingEitherWayConflictsButASiblingWithACommonPrefixDoesNot() {
        StoragePool old = pool("old", T1, "/srv/loop", Map.of());
        String inside = BackingDirConflict.find(pool("in", T2, "/srv/loop/deeper/./x", Map.of()), List.of(old)).orElseThrow();
        assertTrue(inside.contains("/srv/loop/deeper/x lies inside /srv/loop, the backingDir of StoragePool old"), inside);
        String contains = BackingDirConflict.find(pool("out", T2, "/srv", Map.of()), List.of(old)).orElseThrow();
        assertTrue(contains.contains("contains /srv/loop"), contains);
        assertEquals(Optional.empty(), BackingDirConflict.find(pool("sib", T2, "/srv/loop2", Map.of()), List.of(old)));
        assertEquals(Optional.empty(), BackingDirConflict.find(pool("up", T2, "/srv/loop/../other", Map.of()), List.of(old)));
    }

    @Test
    void theDefaultDirectoryOfOnePoolCanLieInsideAnothersExplicitOne() {
        StoragePool all = pool("all", T1, "/var/lib/loopcsi", Map.of());
        StoragePool defaulted = pool("fast", T2, null, Map.of()); // /var/lib/loopcsi/fast
        assertTrue(BackingDirConflict.find(defaulted, List.of(all, defaulted)).isPresent());
        StoragePool other = pool("slow", T1, null, Map.of()); // /var/lib/loopcsi/slow: no overlap with /var/lib/loopcsi/fast
        assertEquals(Optional.empty(), BackingDirConflict.find(defaulted, List.of(other, defaulted)));
    }

    @Test
    void onlySelectorsThatProvablySelectDisjointNodesKeepPoolsApart() {
        StoragePool a = pool("a", T1, "/data", Map.of("disk", "ssd"));
        // same key, other value: no node has both labels
        assertEquals(Optional.empty(), BackingDirConflict.find(pool("b", T2, "/data", Map.of("disk", "hdd")), List.of(a)));
        // other keys, or no selector: a node may carry both
        assertTrue(BackingDirConflict.find(pool("c", T2, "/data", Map.of("zone", "z1")), List.of(a)).isPresent());
        assertTrue(BackingDirConflict.find(pool("d", T2, "/data", Map.of()), List.of(a)).isPresent());
        assertTrue(BackingDirConflict.find(pool("e", T2, "/data", Map.of("disk", "ssd", "zone", "z1")), List.of(a)).isPresent());
        assertTrue(BackingDirConflict.find(pool("f", T2, "/data", null), List.of(a)).isPresent());
        assertFalse(BackingDirConflict.mayShareNodes(Map.of("disk", "ssd", "zone", "z1"), Map.of("zone", "z2")));
    }

    @Test
    void ageIsTheCreationTimeThenTheName() {
        StoragePool b = pool("b", T1, "/d", Map.of());
        StoragePool a = pool("a", T1, "/d", Map.of());
        List<StoragePool> all = List.of(b, a);
        assertEquals(Optional.empty(), BackingDirConflict.find(a, all), "same second: the first name wins");
        assertTrue(BackingDirConflict.find(b, all).orElseThrow().contains("StoragePool a"));
        // each newer pool names every older one it overlaps, oldest first
        StoragePool c = pool("c", T2, "/d/c", Map.of());
        String m = BackingDirConflict.find(c, List.of(c, b, a)).orElseThrow();
        assertTrue(m.indexOf("StoragePool a") < m.indexOf("StoragePool b"), m);
    }
}
