package io.loopcsi.operator;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.loopcsi.operator.desired.PrometheusRuleSpec;
import io.loopcsi.operator.desired.ServiceMonitorSpec;
import io.loopcsi.operator.desired.VolumeSnapshotClassSpec;

/**
 * Every kind of object a pool makes, with the reads and the one write the ownership record needs:
 * list (all namespaces), get one, and take the pool's owner reference off an object that is not
 * the pool's (so that Kubernetes' garbage collector keeps it when the pool goes). A kind the server
 * does not serve (no Prometheus Operator, no snapshot CRDs, no VolumeAttributesClass API) lists nothing.
 */
public final class PoolObjectKinds {

    /** One kind. */
    public interface Kind {
        String kind();

        /** Objects of this kind in every namespace, with this label selector when not null. */
        List<HasMetadata> list(KubernetesClient client, String labelSelector);

        Optional<HasMetadata> get(KubernetesClient client, String namespace, String name);

        /** Removes owner references with this UID from the object (a patch); nothing else of it changes. */
        void removeOwner(KubernetesClient client, HasMetadata o, String ownerUid);
    }

    public static final List<Kind> ALL = List.of(
            typed("CSIDriver", CSIDriver.class, false), typed("ServiceAccount", ServiceAccount.class, true),
            typed("ClusterRole", ClusterRole.class, false), typed("ClusterRoleBinding", ClusterRoleBinding.class, false),
            typed("Role", Role.class, true), typed("RoleBinding", RoleBinding.class, true),
            typed("Deployment", Deployment.class, true), typed("DaemonSet", DaemonSet.class, true),
            typed("StorageClass", StorageClass.class, false), typed("Service", Service.class, true),
            typed("ConfigMap", ConfigMap.class, true),
            generic(ServiceMonitorSpec.KIND, true, c -> Optional.of(monitoring(ServiceMonitorSpec.KIND, "servicemonitors"))),
            generic(PrometheusRuleSpec.KIND, true, c -> Optional.of(monitoring(PrometheusRuleSpec.KIND, "prometheusrules"))),
            generic(VolumeSnapshotClassSpec.KIND, false, c -> SnapshotApiDiscovery.servedVersion(c)
                    .map(v -> new ResourceDefinitionContext.Builder().withGroup(VolumeSnapshotClassSpec.GROUP).withVersion(v)
                            .withKind(VolumeSnapshotClassSpec.KIND).withPlural(VolumeSnapshotClassSpec.PLURAL).withNamespaced(false).build())),
            gated(ClassApiDiscovery.GROUP_SNAPSHOT_CLASSES), gated(ClassApiDiscovery.VOLUME_ATTRIBUTES_CLASSES));

    private PoolObjectKinds() {
    }

    public static Optional<Kind> of(String kind) {
        return ALL.stream().filter(k -> k.kind().equals(kind)).findFirst();
    }

    /** A cluster-scoped class kind read in the newest version served, listing nothing where none is. */
    private static Kind gated(ClassApiDiscovery api) {
        return generic(api.kind(), false, c -> api.servedVersion(c).map(api::context));
    }

    private static ResourceDefinitionContext monitoring(String kind, String plural) {
        return new ResourceDefinitionContext.Builder().withGroup(ServiceMonitorSpec.GROUP).withVersion(ServiceMonitorSpec.VERSION).withKind(kind)
                .withPlural(plural).withNamespaced(true).build();
    }

    static boolean strip(HasMetadata o, String ownerUid) {
        var refs = o.getMetadata().getOwnerReferences();
        if (refs == null || refs.stream().noneMatch(r -> ownerUid.equals(r.getUid()))) {
            return false;
        }
        o.getMetadata().setOwnerReferences(new ArrayList<>(refs.stream().filter(r -> !ownerUid.equals(r.getUid())).toList()));
        return true;
    }

    private static <T extends HasMetadata> Kind typed(String kind, Class<T> type, boolean namespaced) {
        return new Kind() {
            @Override
            public String kind() {
                return kind;
            }

            @Override
            public List<HasMetadata> list(KubernetesClient client, String labelSelector) {
                var all = namespaced ? client.resources(type).inAnyNamespace() : client.resources(type);
                List<T> items = (labelSelector == null ? all : all.withLabelSelector(labelSelector)).list().getItems();
                return new ArrayList<>(items);
            }

            @Override
            public Optional<HasMetadata> get(KubernetesClient client, String namespace, String name) {
                return Optional.ofNullable(namespaced ? client.resources(type).inNamespace(namespace).withName(name).get()
                        : client.resources(type).withName(name).get());
            }

            @Override
            public void removeOwner(KubernetesClient client, HasMetadata o, String ownerUid) {
                var r = namespaced ? client.resources(type).inNamespace(o.getMetadata().getNamespace()).withName(o.getMetadata().getName())
                        : client.resources(type).withName(o.getMetadata().getName());
                r.edit(x -> {
                    strip(x, ownerUid);
                    return x;
                });
            }
        };
    }

    private static Kind generic(String kind, boolean namespaced, Function<KubernetesClient, Optional<ResourceDefinitionContext>> served) {
        return new Kind() {
            @Override
            public String kind() {
                return kind;
            }

            @Override
            public List<HasMetadata> list(KubernetesClient client, String labelSelector) {
                Optional<ResourceDefinitionContext> ctx = served.apply(client);
                if (ctx.isEmpty()) {
                    return List.of();
                }
                try {
                    var all = namespaced ? client.genericKubernetesResources(ctx.get()).inAnyNamespace()
                            : client.genericKubernetesResources(ctx.get());
                    List<HasMetadata> out = new ArrayList<>();
                    for (GenericKubernetesResource g : (labelSelector == null ? all : all.withLabelSelector(labelSelector)).list().getItems()) {
                        g.setKind(kind);
                        out.add(g);
                    }
                    return out;
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 404) {
                        return List.of(); // the CRD is not installed
                    }
                    throw e;
                }
            }

            @Override
            public Optional<HasMetadata> get(KubernetesClient client, String namespace, String name) {
                Optional<ResourceDefinitionContext> ctx = served.apply(client);
                if (ctx.isEmpty()) {
                    return Optional.empty();
                }
                try {
                    GenericKubernetesResource g = namespaced ? client.genericKubernetesResources(ctx.get()).inNamespace(namespace).withName(name).get()
                            : client.genericKubernetesResources(ctx.get()).withName(name).get();
                    if (g != null) {
                        g.setKind(kind);
                    }
                    return Optional.ofNullable(g);
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 404) {
                        return Optional.empty();
                    }
                    throw e;
                }
            }

            @Override
            public void removeOwner(KubernetesClient client, HasMetadata o, String ownerUid) {
                ResourceDefinitionContext ctx = served.apply(client).orElseThrow();
                var r = namespaced ? client.genericKubernetesResources(ctx).inNamespace(o.getMetadata().getNamespace()).withName(o.getMetadata().getName())
                        : client.genericKubernetesResources(ctx).withName(o.getMetadata().getName());
                r.edit(x -> {
                    strip(x, ownerUid);
                    return x;
                });
            }
        };
    }
}
