package io.loopcsi.node;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.loopcsi.handoff.HandoffNames;

/**
 * The node's writes to hand-off objects: its finalizer (on before it makes files, off after it
 * deleted them) and the whole status (a JSON merge patch of the status subresource).
 */
final class ObjectWrites {

    private ObjectWrites() {
    }

    static <T extends CustomResource<?, S>, S> void status(KubernetesClient client, Class<T> type, T current, S status) {
        try {
            T patch = type.getDeclaredConstructor().newInstance();
            patch.getMetadata().setName(current.getMetadata().getName());
            patch.setStatus(status);
            client.resources(type).withName(current.getMetadata().getName()).subresource("status")
                    .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean hasFinalizer(CustomResource<?, ?> r) {
        return r.getMetadata().getFinalizers() != null && r.getMetadata().getFinalizers().contains(HandoffNames.FINALIZER);
    }

    /** Adds the node's finalizer; false when the object is gone or being deleted (then nothing may be made for it). */
    static <T extends CustomResource<?, ?>> boolean addFinalizer(KubernetesClient client, Class<T> type, T current) {
        if (hasFinalizer(current)) {
            return true;
        }
        try {
            T edited = client.resources(type).withName(current.getMetadata().getName()).edit(o -> {
                if (o.getMetadata().getDeletionTimestamp() == null) {
                    List<String> f = new ArrayList<>(o.getMetadata().getFinalizers() == null ? List.of() : o.getMetadata().getFinalizers());
                    if (!f.contains(HandoffNames.FINALIZER)) {
                        f.add(HandoffNames.FINALIZER);
                    }
                    o.getMetadata().setFinalizers(f);
                }
                return o;
            });
            return edited != null && hasFinalizer(edited);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return false;
            }
            throw e;
        }
    }

    static <T extends CustomResource<?, ?>> void removeFinalizer(KubernetesClient client, Class<T> type, T current) {
        if (!hasFinalizer(current)) {
            return;
        }
        try {
            client.resources(type).withName(current.getMetadata().getName()).edit(o -> {
                List<String> f = new ArrayList<>(o.getMetadata().getFinalizers() == null ? List.of() : o.getMetadata().getFinalizers());
                f.remove(HandoffNames.FINALIZER);
                o.getMetadata().setFinalizers(f);
                return o;
            });
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }
}
