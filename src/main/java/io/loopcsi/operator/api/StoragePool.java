package io.loopcsi.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata;

/**
 * A pool of loop-device-backed volumes on a set of nodes, served by its own CSI driver
 * (controller Deployment + node DaemonSet) that the operator rolls out. Cluster-scoped: it
 * owns cluster-scoped objects (CSIDriver, StorageClasses, ClusterRoles).
 */
@CSVMetadata(displayName = "Storage Pool", description = "Loop-device-backed local volumes on a set of nodes: the pool's CSI driver,"
        + " StorageClasses and capacity per node")
@Group(StoragePool.GROUP)
@Version(StoragePool.VERSION)
@ShortNames("spool")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Nodes", jsonPath = ".status.nodes", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Capacity", jsonPath = ".status.capacity", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Allocated", jsonPath = ".status.allocated", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class StoragePool extends CustomResource<StoragePoolSpec, StoragePoolStatus> {

    public static final String GROUP = "loopcsi.io";
    public static final String VERSION = "v1alpha1";

    public StoragePool() {
    }

    public StoragePool(String name, StoragePoolSpec spec) {
        getMetadata().setName(name);
        setSpec(spec);
    }

    /** The host directory holding this pool's images on every node. */
    public String backingDir() {
        String dir = getSpec() == null ? null : getSpec().getBackingDir();
        return dir == null || dir.isBlank() ? "/var/lib/loopcsi/" + getMetadata().getName() : dir;
    }

    /** The CSI driver name of this pool (also the provisioner of its StorageClasses). */
    public String driverName() {
        String d = getSpec() == null ? null : getSpec().getDriverName();
        return d == null || d.isBlank() ? getMetadata().getName() + ".loopcsi.io" : d;
    }
}
