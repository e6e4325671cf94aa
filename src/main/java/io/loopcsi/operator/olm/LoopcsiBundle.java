package io.loopcsi.operator.olm;

import java.util.List;

import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Annotations;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Annotations.Annotation;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Icon;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.InstallMode;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Link;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Maintainer;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Provider;
import io.quarkiverse.operatorsdk.annotations.SharedCSVMetadata;

/**
 * What the OLM bundle says about loopcsi (the ClusterServiceVersion's catalogue entry), read at
 * build time by QOSDK's bundle generator; every reconciler of the build lands in this one bundle.
 * Display name and description of each owned CRD sit on its class ({@code @CSVMetadata} on
 * StoragePool). What the generator cannot know (the operator Deployment of kubernetes/, related
 * images, descriptors, alm-examples, internal objects) is added by the build's bundle step
 * (GeneratedManifestsIT, {@code make bundle}), which reads {@link #INTERNAL_CRDS} from here.
 *
 * <p>The operator is cluster-scoped (StoragePools are), so AllNamespaces is its only install mode:
 * an OperatorGroup without targetNamespaces (kubernetes/olm/operatorgroup.yaml). OLM annotates the
 * CSV, and through it the operator's pods, with {@code olm.targetNamespaces} (empty for
 * AllNamespaces); the operator reads neither that nor a WATCH_NAMESPACE: it watches the
 * cluster-scoped StoragePools and puts every pool's components into its own namespace
 * (LOOPCSI_NAMESPACE from the pod's metadata.namespace).
 */
@CSVMetadata(bundleName = LoopcsiBundle.NAME, displayName = "loopcsi",
        description = LoopcsiBundle.DESCRIPTION,
        keywords = { "storage", "csi", "local", "loop device", "volumes", "xfs", "block" },
        maturity = "alpha",
        minKubeVersion = "1.20.0",
        provider = @Provider(name = "loopcsi", url = LoopcsiBundle.URL),
        maintainers = @Maintainer(name = "loopcsi maintainers", email = "dev@loopcsi.io"),
        links = { @Link(name = "Source code", url = LoopcsiBundle.URL),
                @Link(name = "Documentation", url = LoopcsiBundle.URL + "#readme") },
        icon = @Icon(fileName = "loopcsi.svg", mediatype = "image/svg+xml"),
        installModes = { @InstallMode(type = "AllNamespaces"), @InstallMode(type = "OwnNamespace", supported = false),
                @InstallMode(type = "SingleNamespace", supported = false), @InstallMode(type = "MultiNamespace", supported = false) },
        annotations = @Annotations(capabilities = "Basic Install", categories = "Storage", repository = LoopcsiBundle.URL,
                others = @Annotation(name = "operatorframework.io/suggested-namespace", value = "loopcsi-system")))
public class LoopcsiBundle implements SharedCSVMetadata {

    public static final String NAME = "loopcsi";
    public static final String URL = "https://github.com/loopcsi/loopcsi";

    /**
     * CRDs of the bundle that users do not create themselves (the operator and the drivers write
     * them): marked operators.operatorframework.io/internal-objects, so consoles hide them. One
     * line per CRD, by its name (plural.group).
     */
    public static final List<String> INTERNAL_CRDS = List.of("loopvolumes.loopcsi.io", "loopsnapshots.loopcsi.io",
            "loopgroupsnapshots.loopcsi.io",
            "looppoolnodes.loopcsi.io", "looptransfers.loopcsi.io");

    static final String DESCRIPTION = """
            loopcsi gives a cluster **local persistent volumes without dedicated disks or LVM**: each \
            volume is a sparse image file in a directory on a node, attached to a loop device and \
            handed to pods as a raw block device or as an xfs or ext4 filesystem.

            The operator reconciles **StoragePools**. For each pool it rolls out the pool's own CSI \
            driver in the operator's namespace: a CSIDriver, a controller Deployment (with \
            csi-provisioner, csi-resizer and csi-snapshotter), a privileged node DaemonSet (the plugin \
            registers itself with kubelet), their RBAC, the pool's StorageClasses (WaitForFirstConsumer) and \
            a metrics Service, plus a ServiceMonitor and a PrometheusRule where the Prometheus Operator is installed. \
            Deleting a pool is held while volumes of its driver exist; backing data on the nodes is \
            never deleted by the operator.

            ### Prerequisites
            * Nodes that may run privileged pods: the node plugin attaches loop devices and mounts \
            filesystems as root.
            * Loop devices on those nodes (`/dev/loop-control`; `modprobe loop` where the module is \
            not loaded).
            * Room on the nodes' filesystem under each pool's backing directory (default \
            `/var/lib/loopcsi/<pool>`); image files are sparse, and a pool never promises more than \
            the host filesystem holds (`hostReserve` keeps space for the host; `thinOvercommit` lets \
            thin volumes pass `capacityPerNode`, never the host's free space).
            * Nothing to install on the nodes: the loopcsi image brings xfsprogs, e2fsprogs and \
            util-linux. Snapshots need the VolumeSnapshot CRDs and snapshot-controller.

            ### A first pool
            Label the nodes that carry the pool, then create it (the example of this operator, \
            50Gi per node, StorageClasses `loopcsi-xfs` (the cluster default) and `loopcsi-block`):

                kubectl label node NODE loopcsi.io/storage=true
                kubectl apply -f storagepool.yaml
                kubectl get storagepools
                kubectl describe storagepool local

            The pool reports Ready, Progressing and Degraded conditions with reasons; a name it \
            wants that belongs to someone else (a StorageClass, say) is never taken over \
            (`Ready=False`, reason `NameConflict`). PersistentVolumeClaims of its StorageClasses \
            then get volumes on the node where their pod is scheduled.
            """;
}
