package io.loopcsi.operator.status;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.operator.api.StoragePool;

/**
 * Finds objects that already exist under a name the pool wants but are not the pool's (no owner
 * reference to it). The operator never takes such an object over (server-side apply with force
 * would): the pool reports the conflict instead.
 */
public final class OwnershipCheck {

    private OwnershipCheck() {
    }

    /** "Kind name" of every desired object that exists and is not owned by {@code pool}. */
    public static List<String> foreign(KubernetesClient client, StoragePool pool, List<? extends HasMetadata> desired) {
        List<String> out = new ArrayList<>();
        for (HasMetadata d : desired) {
            HasMetadata actual = client.resource(d).get();
            if (actual != null && !ownedBy(actual, pool)) {
                out.add(d.getKind() + " " + (d.getMetadata().getNamespace() == null ? "" : d.getMetadata().getNamespace() + "/")
                        + d.getMetadata().getName());
            }
        }
        return out;
    }

    public static boolean ownedBy(HasMetadata actual, StoragePool pool) {
        List<OwnerReference> refs = actual.getMetadata().getOwnerReferences();
        return refs != null && refs.stream().anyMatch(r -> pool.getMetadata().getUid() != null && pool.getMetadata().getUid().equals(r.getUid()));
    }
}
