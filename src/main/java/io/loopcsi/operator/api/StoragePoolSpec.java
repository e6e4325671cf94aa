package io.loopcsi.operator.api;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.Toleration;

/** What the admin asks for. Validation the API server can do is expressed here as schema annotations. */
public class StoragePoolSpec {

    /** A Kubernetes quantity without sign or exponent, e.g. 20Gi, 500M, 1T. */
    public static final String QUANTITY = "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$";

    @JsonPropertyDescription("Host directory holding the pool's volume images on every node; default /var/lib/loopcsi/<pool>.")
    @Pattern("^/[^\\x00]*$")
    @Size(max = 4096)
    private String backingDir;

    @JsonPropertyDescription("Capacity of the pool on each node (a quantity, e.g. 100Gi), the hard cap: thick volumes and snapshots"
            + " count in full, thin volumes their size / thinOvercommit.")
    @Required
    @Pattern(QUANTITY)
    private String capacityPerNode;

    @JsonPropertyDescription("Free space of the host filesystem under backingDir that the pool never counts as available on each"
            + " node, kept for the host (a quantity, e.g. 10Gi); default none. A reserve not smaller than a node's filesystem makes"
            + " the pool Degraded (HostReserveTooLarge).")
    @Pattern(QUANTITY)
    private String hostReserve;

    @JsonPropertyDescription("How far the sizes of thin volumes may exceed capacityPerNode: 1 (default, not at all) to 100; e.g. 2"
            + " lets thin volumes of 200Gi share a 100Gi capacity. The host's free space, less hostReserve and less what existing"
            + " volumes may still write, still bounds every volume: a volume never finds the host full before itself.")
    @io.fabric8.generator.annotation.Min(1)
    @io.fabric8.generator.annotation.Max(100)
    private Double thinOvercommit;

    @JsonPropertyDescription("Nodes that carry the pool (label selector of the node DaemonSet); all nodes when empty.")
    private Map<String, String> nodeSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("Tolerations of the node DaemonSet.")
    private List<Toleration> tolerations = new ArrayList<>();

    @JsonPropertyDescription("Filesystems volumes may have; default [xfs].")
    @Size(min = 1)
    private List<FsType> fsTypes = new ArrayList<>(List.of(FsType.xfs));

    @JsonPropertyDescription("StorageClasses to create for the pool.")
    private List<PoolStorageClass> storageClasses = new ArrayList<>();

    @JsonPropertyDescription("CSI driver name; default <pool>.loopcsi.io.")
    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @Size(max = 63)
    private String driverName;

    @JsonPropertyDescription("Container images of the driver and its sidecars.")
    private Images images = new Images();

    @JsonPropertyDescription("What the pool's controller and node components run: native (default: the native executable,"
            + " images.loopcsiNative; a fraction of the JVM's start time and memory) or jvm (images.loopcsi). Changing it rolls"
            + " the components over; volumes stay as they are, both read the same pool directories.")
    @io.fabric8.generator.annotation.Default("native")
    private PoolRuntime runtime = PoolRuntime.NATIVE;

    @JsonPropertyDescription("Requests and limits per role (controller, node, sidecars), each over that role's default; every"
            + " container has a memory limit. A limit below a request, or a memory limit below what the role needs, is refused"
            + " (Ready=False, InvalidResources) and the running components are left as they are.")
    private PoolResources resources = new PoolResources();

    @JsonPropertyDescription("The transfer between the pool's nodes behind a restore or clone onto another node: on by default, with a"
            + " bandwidth cap and a limit of concurrent transfers per node.")
    private PoolTransfer transfer = new PoolTransfer();

    @JsonPropertyDescription("Monitoring extras: the Grafana dashboard ConfigMap.")
    private Monitoring monitoring = new Monitoring();

    @JsonPropertyDescription("The pool's VolumeSnapshotClass (written where external-snapshotter's snapshot.storage.k8s.io API is served).")
    private Snapshots snapshots = new Snapshots();

    @JsonPropertyDescription("What to do about the claims of a node whose Node object was deleted (and whose node plugin is silent):"
            + " Keep (default: report it, claims stay bound) or ReleaseClaims (delete the PersistentVolumeClaims and PersistentVolumes of"
            + " its volumes so that their owners, e.g. StatefulSets, re-create them on other nodes; the data on that node is lost)."
            + " A node that only stopped reporting is never acted on.")
    @io.fabric8.generator.annotation.Default("Keep")
    private LostNodePolicy lostNodes = LostNodePolicy.Keep;

    public String getBackingDir() {
        return backingDir;
    }

    public void setBackingDir(String backingDir) {
        this.backingDir = backingDir;
    }

    public String getCapacityPerNode() {
        return capacityPerNode;
    }

    public void setCapacityPerNode(String capacityPerNode) {
        this.capacityPerNode = capacityPerNode;
    }

    public String getHostReserve() {
        return hostReserve;
    }

    public void setHostReserve(String hostReserve) {
        this.hostReserve = hostReserve;
    }

    public Double getThinOvercommit() {
        return thinOvercommit;
    }

    public void setThinOvercommit(Double thinOvercommit) {
        this.thinOvercommit = thinOvercommit;
    }

    public Map<String, String> getNodeSelector() {
        return nodeSelector;
    }

    public void setNodeSelector(Map<String, String> nodeSelector) {
        this.nodeSelector = nodeSelector;
    }

    public List<Toleration> getTolerations() {
        return tolerations;
    }

    public void setTolerations(List<Toleration> tolerations) {
        this.tolerations = tolerations;
    }

    public List<FsType> getFsTypes() {
        return fsTypes;
    }

    public void setFsTypes(List<FsType> fsTypes) {
        this.fsTypes = fsTypes;
    }

    public List<PoolStorageClass> getStorageClasses() {
        return storageClasses;
    }

    public void setStorageClasses(List<PoolStorageClass> storageClasses) {
        this.storageClasses = storageClasses;
    }

    public String getDriverName() {
        return driverName;
    }

    public void setDriverName(String driverName) {
        this.driverName = driverName;
    }

    public PoolRuntime getRuntime() {
        return runtime;
    }

    public void setRuntime(PoolRuntime runtime) {
        this.runtime = runtime;
    }

    public Images getImages() {
        return images;
    }

    public void setImages(Images images) {
        this.images = images;
    }

    public PoolResources getResources() {
        return resources;
    }

    public void setResources(PoolResources resources) {
        this.resources = resources;
    }

    public PoolTransfer getTransfer() {
        return transfer;
    }

    public void setTransfer(PoolTransfer transfer) {
        this.transfer = transfer;
    }

    public Monitoring getMonitoring() {
        return monitoring;
    }

    public void setMonitoring(Monitoring monitoring) {
        this.monitoring = monitoring;
    }

    public Snapshots getSnapshots() {
        return snapshots;
    }

    public void setSnapshots(Snapshots snapshots) {
        this.snapshots = snapshots;
    }

    public LostNodePolicy getLostNodes() {
        return lostNodes;
    }

    public void setLostNodes(LostNodePolicy lostNodes) {
        this.lostNodes = lostNodes;
    }
}
