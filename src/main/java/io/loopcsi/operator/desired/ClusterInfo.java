package io.loopcsi.operator.desired;

/**
 * What the connected API server knows, from discovery, so that builders write only fields it
 * serves (an older server silently drops newer fields, and the operator would then see a
 * difference at every reconcile).
 *
 * @param csiStorageCapacity the server serves CSIStorageCapacity (any version): CSIDriver.storageCapacity is kept
 * @param fsGroupPolicy      CSIDriver.fsGroupPolicy is served (1.20+)
 * @param serverSideApplyGa  server-side apply is GA (1.22+); before, creating a Service by apply fails
 *                           ("resourceVersion should not be set on objects to be created", seen on 1.20)
 * @param serverMinor        the server's minor version (1.MINOR): the sidecar images that fit it (SidecarImages)
 * @param securityContextConstraints OpenShift's security.openshift.io/v1 SecurityContextConstraints are served:
 *                           the node pods' ServiceAccount must be allowed the privileged SCC (CsiRbac)
 */
public record ClusterInfo(boolean csiStorageCapacity, boolean fsGroupPolicy, boolean serverSideApplyGa, int serverMinor,
        boolean securityContextConstraints) {

    /** A current Kubernetes (1.24+): everything is served (not OpenShift). */
    public static final ClusterInfo CURRENT = new ClusterInfo(true, true, true, Integer.MAX_VALUE);

    /** A Kubernetes server of that minor version (not OpenShift). */
    public ClusterInfo(boolean csiStorageCapacity, boolean fsGroupPolicy, boolean serverSideApplyGa, int serverMinor) {
        this(csiStorageCapacity, fsGroupPolicy, serverSideApplyGa, serverMinor, false);
    }

    /** A server of a current version with these features. */
    public ClusterInfo(boolean csiStorageCapacity, boolean fsGroupPolicy, boolean serverSideApplyGa) {
        this(csiStorageCapacity, fsGroupPolicy, serverSideApplyGa, Integer.MAX_VALUE);
    }
}
