package io.loopcsi.operator.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.loopcsi.operator.api.ManagedObject;
import io.loopcsi.operator.api.StoragePool;
import io.loopcsi.operator.desired.PoolNames;
import io.loopcsi.operator.desired.Pools;

class ManagedRecordTest {

    final StoragePool pool = Pools.full("p");
    final Set<String> wanted = Set.of(ManagedRecord.key("StorageClass", null, "fast"));

    /** A class as `kubectl get sc -o yaml` gives it, renamed, with a fresh UID from the API server. */
    StorageClass sc(String name, String uid, boolean ownerRef) {
        var b = new StorageClassBuilder().withNewMetadata().withName(name).withUid(uid).withLabels(PoolNames.labels(pool))
                .addToAnnotations("javaoperatorsdk.io/previous", "x").endMetadata().withProvisioner("p.loopcsi.io");
        StorageClass sc = b.build();
        if (ownerRef) {
            sc.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withKind("StoragePool").withName("p")
                    .withUid(pool.getMetadata().getUid()).withController(true).build()));
        }
        return sc;
    }

    @Test
    void aCopyWithEveryMarkIsNotOursButTheRecordedClassIs() {
        List<ManagedObject> record = List.of(new ManagedObject("StorageClass", null, "old", "u-old"));
        assertFalse(ManagedRecord.ours(record, sc("my-copy", "u-copy", true), pool, wanted), "a renamed copy with the owner reference");
        assertTrue(ManagedRecord.ours(record, sc("old", "u-old", true), pool, wanted), "recorded by UID");
        assertFalse(ManagedRecord.ours(record, sc("old", "u-recreated", true), pool, wanted), "same name, another object: not recorded");
        assertTrue(ManagedRecord.ours(null, sc("fast", "u-fast", true), pool, wanted), "an older release's class at a wanted name: adopted");
        assertFalse(ManagedRecord.ours(null, sc("fast", "u-fast", false), pool, wanted), "at a wanted name without the owner reference");
    }

    @Test
    void copiesAreThoseWithMarksThatAreNotOurs() {
        List<ManagedObject> record = List.of(new ManagedObject("StorageClass", null, "fast", "u-fast"));
        StorageClass unmarked = new StorageClassBuilder().withNewMetadata().withName("other").withUid("u-o").endMetadata().build();
        assertEquals(List.of("StorageClass a-copy", "StorageClass b-copy"), ManagedRecord.copies(
                List.of(sc("fast", "u-fast", true), sc("b-copy", "u-b", false), sc("a-copy", "u-a", true), unmarked), record, pool, wanted));
    }

    @Test
    void theNextRecordKeepsWhatStillExistsAndAddsWhatWasMade() {
        List<ManagedObject> previous = List.of(new ManagedObject("StorageClass", null, "gone", "u-gone"),
                new ManagedObject("StorageClass", null, "kept", "u-kept"));
        List<ManagedObject> next = ManagedRecord.next(previous, List.of(sc("fast", "u-fast", true), sc("fast-block", "u-theirs", false)), pool,
                m -> m.getUid().equals("u-kept"));
        assertEquals(List.of(new ManagedObject("StorageClass", null, "fast", "u-fast"), new ManagedObject("StorageClass", null, "kept", "u-kept")),
                next, "made now, and kept: the vanished one and an object without the owner reference are not recorded");
    }
}
