package io.loopcsi.operator.desired;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.loopcsi.operator.api.FsType;
import io.loopcsi.operator.api.Images;
import io.loopcsi.operator.api.StoragePool;

/**
 * The pool's controller: loopcsi in the controller role (CSI Identity + Controller on the shared
 * socket; its own /q/health is its liveness, so no livenessprobe sidecar) beside csi-provisioner,
 * csi-resizer and csi-snapshotter, in versions that fit the API server (SidecarImages).
 * csi-provisioner runs with --strict-topology: with WaitForFirstConsumer the requisite topology is
 * then only the node the scheduler selected, where the pod will run; without it the driver would
 * be free to put a node-local volume on another node, where the pod cannot use it.
 * --capacity-ownerref-level=2 makes this Deployment own the CSIStorageCapacity objects (pod, its
 * ReplicaSet, the Deployment); --extra-create-metadata passes the PVC's name and namespace, kept
 * in the LoopVolume's parameters. Nothing in it is privileged; the containers share the CSI
 * socket on an emptyDir.
 */
public final class ControllerDeployment {

    /** The loopcsi container's only TCP port: /q/health and /q/metrics. */
    public static final String HTTP_ADDRESS = "0.0.0.0:" + Sidecars.METRICS_PORT;

    private ControllerDeployment() {
    }

    public static Deployment desired(StoragePool pool, String namespace) {
        return desired(pool, namespace, ClusterInfo.CURRENT);
    }

    public static Deployment desired(StoragePool pool, String namespace, ClusterInfo cluster) {
        return desired(pool, namespace, cluster, VolumeApis.NONE);
    }

    /**
     * With the feature gates each sidecar set needs, and those that let Kubernetes reach
     * ModifyVolume (VolumeAttributesClass: csi-provisioner passes mutable_parameters at create,
     * csi-resizer calls ControllerModifyVolume) and group snapshots (CSIVolumeGroupSnapshot:
     * csi-snapshotter calls the GroupController), each only where the API version that set reads is
     * served, and only for sidecars that know the gate: a gate a release does not know makes it
     * exit ("unrecognized feature gate"), and csi-resizer before v1.4 has no --feature-gates at all.
     * Topology=true only for csi-provisioner v2 and v3, where the GA gate still defaults to off
     * (external-provisioner PR #516); v5 turned it on and announced its removal (CHANGELOG-5.0).
     * csi-provisioner v6 and csi-resizer v2 have VolumeAttributesClass on by default and turn it
     * off themselves where storage.k8s.io/v1 does not serve it (external-provisioner #1423,
     * external-resizer #532): no gate is passed to them.
     */
    public static Deployment desired(StoragePool pool, String namespace, ClusterInfo cluster, VolumeApis apis) {
        SidecarImages.Set set = SidecarImages.forServer(cluster.serverMinor());
        boolean oldProvisioner = set == SidecarImages.V1_20 || set == SidecarImages.V1_21;
        boolean vacGate = set == SidecarImages.V1_24 && apis.vacV1beta1();
        boolean groups = set == SidecarImages.V1_24 ? apis.groupSnapshotsV1beta1() : set == SidecarImages.CURRENT && apis.groupSnapshotsV1();
        Images img = Sidecars.images(pool);
        SidecarImages.Set sidecars = SidecarImages.of(img, cluster);
        String pull = Sidecars.pullPolicy(pool);
        var sc = Sidecars.unprivileged();
        List<Container> containers = new ArrayList<>();
        containers.add(new ContainerBuilder().withName("loopcsi")
                .withImage(Sidecars.loopcsiImage(pool)).withImagePullPolicy(pull)
                .withArgs("controller", "--endpoint", "unix://" + Sidecars.SOCKET, "--driver-name", pool.driverName(),
                        "--pool", pool.getMetadata().getName(), "--http-address", HTTP_ADDRESS)
                .addNewPort().withName("metrics").withContainerPort(Sidecars.METRICS_PORT).withProtocol("TCP").endPort()
                .withLivenessProbe(Sidecars.probe("/q/health/live"))
                .withReadinessProbe(Sidecars.probe("/q/health/ready"))
                .withVolumeMounts(Sidecars.socketMount(), Sidecars.tmpMount())
                .withEnv(Sidecars.memoryLimitEnv("loopcsi"))
                .withResources(ContainerResources.controller(pool))
                .withSecurityContext(sc)
                .build());
        List<String> provisioner = new ArrayList<>(List.of("--csi-address=" + Sidecars.SOCKET));
        List<String> gates = new ArrayList<>();
        if (oldProvisioner) {
            gates.add("Topology=true");
        }
        if (vacGate) {
            gates.add("VolumeAttributesClass=true");
        }
        if (!gates.isEmpty()) {
            provisioner.add("--feature-gates=" + String.join(",", gates));
        }
        // --capacity-poll-interval: every release's default is 1m; the driver answers GetCapacity from its informer cache, so
        // 15s keeps the scheduler's view of a node's room close to the truth after volumes come and go
        provisioner.addAll(List.of("--enable-capacity", "--capacity-ownerref-level=2", "--capacity-poll-interval=15s", "--extra-create-metadata",
                "--strict-topology",
                "--default-fstype=" + defaultFsType(pool), "--timeout=120s"));
        containers.add(sidecar(pool, "csi-provisioner", sidecars.provisioner(), pull, sc, provisioner.toArray(String[]::new)));
        List<String> resizer = new ArrayList<>(List.of("--csi-address=" + Sidecars.SOCKET, "--timeout=120s", "--handle-volume-inuse-error=false"));
        if (vacGate) {
            resizer.add("--feature-gates=VolumeAttributesClass=true");
        }
        containers.add(sidecar(pool, "csi-resizer", sidecars.resizer(), pull, sc, resizer.toArray(String[]::new)));
        List<String> snapshotter = new ArrayList<>(List.of("--csi-address=" + Sidecars.SOCKET, "--timeout=120s", "--extra-create-metadata"));
        if (groups) {
            snapshotter.add("--feature-gates=CSIVolumeGroupSnapshot=true");
        }
        containers.add(sidecar(pool, "csi-snapshotter", sidecars.snapshotter(), pull, sc, snapshotter.toArray(String[]::new)));

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
                .withEnableServiceLinks(false) // as the node's (NodeDaemonSet): no env vars per Service
                .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(65532L).withRunAsGroup(65532L).withFsGroup(65532L)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                .withContainers(containers)
                .addNewVolume().withName(Sidecars.SOCKET_VOLUME).withNewEmptyDir().endEmptyDir().endVolume()
                .addNewVolume().withName(Sidecars.TMP_VOLUME).withNewEmptyDir().endEmptyDir().endVolume()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    static String defaultFsType(StoragePool pool) {
        List<FsType> fs = pool.getSpec().getFsTypes();
        return (fs == null || fs.isEmpty() ? FsType.xfs : fs.get(0)).name();
    }

    /**
     * A leader-elected sidecar. NAMESPACE feeds --leader-election-namespace; POD_NAME and the pod's
     * namespace are what csi-provisioner's --enable-capacity needs for the CSIStorageCapacity owner
     * reference, and it exits at start without them. The name of the namespace variable changed:
     * v2.1.2 reads POD_NAMESPACE ("need POD_NAMESPACE/POD_NAME env variables",
     * external-provisioner cmd/csi-provisioner/csi-provisioner.go at v2.1.2), v3 and later read
     * NAMESPACE (same file); so every sidecar gets both, whatever its version.
     */
    private static Container sidecar(StoragePool pool, String name, String image, String pull, io.fabric8.kubernetes.api.model.SecurityContext sc, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(Sidecars.leaderElection());
        return new ContainerBuilder().withName(name).withImage(image).withImagePullPolicy(pull)
                .withArgs(all)
                .withEnv(Sidecars.fieldEnv("NAMESPACE", "metadata.namespace"), Sidecars.fieldEnv("POD_NAMESPACE", "metadata.namespace"),
                        Sidecars.fieldEnv("POD_NAME", "metadata.name"))
                .withVolumeMounts(Sidecars.socketMount())
                .withResources(ContainerResources.sidecar(pool, name))
                .withSecurityContext(sc)
                .build();
    }
}
