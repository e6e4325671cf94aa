package io.loopcsi.operator.desired;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.loopcsi.operator.api.FsType;
import io.loopcsi.operator.api.Images;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's controller: loopcsi in the controller role beside csi-provisioner (topology,
 * capacity tracking owned by this Deployment, strict topology for WaitForFirstConsumer),
 * csi-resizer, csi-snapshotter and livenessprobe. Nothing in it is privileged; the containers
 * share the CSI socket on an emptyDir.
 */
public final class ControllerDeployment {

    private ControllerDeployment() {
    }

    public static Deployment desired(StoragePool pool, String namespace) {
        Images img = Sidecars.images(pool);
        String pull = Sidecars.pullPolicy(pool);
        var sc = Sidecars.unprivileged();
        List<Container> containers = new ArrayList<>();
        containers.add(new ContainerBuilder().withName("loopcsi")
                .withImage(Sidecars.orDefault(img.getLoopcsi(), Images.LOOPCSI)).withImagePullPolicy(pull)
                .withArgs("controller", "--endpoint", "unix://" + Sidecars.SOCKET, "--driver-name", pool.driverName())
                .withEnv(Sidecars.fieldEnv("NAMESPACE", "metadata.namespace"))
                .addNewPort().withName("metrics").withContainerPort(Sidecars.METRICS_PORT).withProtocol("TCP").endPort()
                .addNewPort().withName("healthz").withContainerPort(Sidecars.HEALTH_PORT).withProtocol("TCP").endPort()
                .withNewLivenessProbe().withNewHttpGet().withPath("/healthz").withPort(new IntOrString("healthz")).endHttpGet()
                .withInitialDelaySeconds(10).withPeriodSeconds(20).withTimeoutSeconds(3).withFailureThreshold(5).endLivenessProbe()
                .withVolumeMounts(Sidecars.socketMount())
                .withResources(Sidecars.driverResources(pool))
                .withSecurityContext(sc)
                .build());
        containers.add(sidecar("csi-provisioner", Sidecars.orDefault(img.getProvisioner(), Images.PROVISIONER), pull, sc,
                "--csi-address=" + Sidecars.SOCKET, "--feature-gates=Topology=true", "--enable-capacity",
                "--capacity-ownerref-level=2", "--extra-create-metadata", "--strict-topology",
                "--default-fstype=" + defaultFsType(pool), "--timeout=120s"));
        containers.add(sidecar("csi-resizer", Sidecars.orDefault(img.getResizer(), Images.RESIZER), pull, sc,
                "--csi-address=" + Sidecars.SOCKET, "--timeout=120s", "--handle-volume-inuse-error=false"));
        containers.add(sidecar("csi-snapshotter", Sidecars.orDefault(img.getSnapshotter(), Images.SNAPSHOTTER), pull, sc,
                "--csi-address=" + Sidecars.SOCKET, "--timeout=120s", "--extra-create-metadata"));
        containers.add(Sidecars.livenessProbe(pool, Sidecars.HEALTH_PORT, sc));

        return new DeploymentBuilder()
                .withNewMetadata().withName(PoolNames.controller(pool)).withNamespace(namespace)
                .withLabels(PoolNames.labels(pool, CsiRbac.CONTROLLER)).endMetadata()
                .withNewSpec()
                .withReplicas(1)
                .withNewSelector().withMatchLabels(PoolNames.selector(pool, CsiRbac.CONTROLLER)).endSelector()
                .withNewTemplate()
                .withNewMetadata().withLabels(PoolNames.labels(pool, CsiRbac.CONTROLLER)).endMetadata()
                .withNewSpec()
                .withServiceAccountName(PoolNames.controller(pool))
                .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(65532L).withRunAsGroup(65532L).withFsGroup(65532L)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                .withContainers(containers)
                .addNewVolume().withName(Sidecars.SOCKET_VOLUME).withNewEmptyDir().endEmptyDir().endVolume()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    static String defaultFsType(StoragePool pool) {
        List<FsType> fs = pool.getSpec().getFsTypes();
        return (fs == null || fs.isEmpty() ? FsType.xfs : fs.get(0)).name();
    }

    /** A leader-elected sidecar; NAMESPACE and POD_NAME feed leader election and the capacity owner reference. */
    private static Container sidecar(String name, String image, String pull, io.fabric8.kubernetes.api.model.SecurityContext sc, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(Sidecars.leaderElection());
        return new ContainerBuilder().withName(name).withImage(image).withImagePullPolicy(pull)
                .withArgs(all)
                .withEnv(Sidecars.fieldEnv("NAMESPACE", "metadata.namespace"), Sidecars.fieldEnv("POD_NAME", "metadata.name"))
                .withVolumeMounts(Sidecars.socketMount())
                .withResources(Sidecars.sidecarResources())
                .withSecurityContext(sc)
                .build();
    }
}
