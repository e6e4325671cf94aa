package io.loopcsi.operator.status;

import java.time.Instant;
import java.util.UUID;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.loopcsi.operator.api.StoragePool;

/**
 * Records core/v1 Events about a pool (what `kubectl describe storagepool` shows). A pool is
 * cluster-scoped, so its events live in the "default" namespace, as a Node's do. A failure to
 * record is logged, never fatal.
 */
public final class PoolEvents {

    public static final String NAMESPACE = "default";
    private static final Logger LOG = Logger.getLogger(PoolEvents.class);

    private PoolEvents() {
    }

    public static void normal(KubernetesClient client, StoragePool pool, String reason, String message) {
        record(client, pool, "Normal", reason, message);
    }

    public static void warning(KubernetesClient client, StoragePool pool, String reason, String message) {
        record(client, pool, "Warning", reason, message);
    }

    private static void record(KubernetesClient client, StoragePool pool, String type, String reason, String message) {
        String now = Instant.now().toString();
        Event e = new EventBuilder()
                .withNewMetadata().withName(pool.getMetadata().getName() + "." + UUID.randomUUID().toString().substring(0, 13).replace("-", ""))
                .withNamespace(NAMESPACE).endMetadata()
                .withNewInvolvedObject().withApiVersion(pool.getApiVersion()).withKind(pool.getKind()).withName(pool.getMetadata().getName())
                .withUid(pool.getMetadata().getUid()).withResourceVersion(pool.getMetadata().getResourceVersion()).endInvolvedObject()
                .withType(type).withReason(reason).withMessage(message)
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                .withNewSource().withComponent("loopcsi-operator").endSource()
                .build();
        try {
            client.v1().events().inNamespace(NAMESPACE).resource(e).create();
        } catch (KubernetesClientException ex) {
            LOG.warnf("cannot record event %s on StoragePool %s: %s", reason, pool.getMetadata().getName(), ex.getMessage());
        }
    }
}
