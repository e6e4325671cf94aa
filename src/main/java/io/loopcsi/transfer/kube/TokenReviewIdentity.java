package io.loopcsi.transfer.kube;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Metadata;
import io.loopcsi.handoff.HandoffNames;
import io.loopcsi.handoff.LoopPoolNode;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.service.Caller;
import io.loopcsi.transfer.service.CallerIdentity;

/**
 * Which node of the pool a caller is, checked by the API server (docs/architecture.md, "Transfer":
 * identity). The call carries the caller pod's projected service-account token (audience
 * {@link #AUDIENCE}, bound to the pod); the token is reviewed (TokenReview, audience checked), the
 * pod it is bound to is read from the review's extras ({@code authentication.kubernetes.io/pod-name}
 * and {@code /pod-uid}: present on 1.20 for a pod-bound token, TransferIdentityKubeTest) and must be
 * the same pod (UID), of the pool's ServiceAccount, controlled by the pool's node DaemonSet, on a
 * node; and the TLS certificate the caller presented must be the one that node published in its
 * LoopPoolNode. Every rule broken is a DENIED naming it.
 */
public final class TokenReviewIdentity implements CallerIdentity {

    public static final String AUDIENCE = "loopcsi.io/transfer";
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final String POD_NAME = "authentication.kubernetes.io/pod-name";
    static final String POD_UID = "authentication.kubernetes.io/pod-uid";

    private final KubernetesClient client;
    private final String pool;
    private final String namespace;
    private final String serviceAccount;
    private final String daemonSet;

    /** The node pods of {@code pool}: in {@code namespace}, of {@code serviceAccount}, controlled by DaemonSet {@code daemonSet}. */
    public TokenReviewIdentity(KubernetesClient client, String pool, String namespace, String serviceAccount, String daemonSet) {
        this.client = client;
        this.pool = pool;
        this.namespace = namespace;
        this.serviceAccount = serviceAccount;
        this.daemonSet = daemonSet;
    }

    @Override
    public String nodeOf(Caller caller) {
        String header = caller.headers().get(AUTHORIZATION);
        if (header == null || !header.startsWith("Bearer ")) {
            throw denied("the call carries no bearer token");
        }
        TokenReview review;
        try {
            review = client.authentication().v1().tokenReviews().create(new TokenReviewBuilder().withNewSpec()
                    .withToken(header.substring("Bearer ".length())).withAudiences(AUDIENCE).endSpec().build());
        } catch (KubernetesClientException e) {
            throw new TransferException(TransferException.Kind.STATE, "cannot review the caller's token: " + e.getMessage(), e);
        }
        var status = review.getStatus();
        if (status == null || !Boolean.TRUE.equals(status.getAuthenticated())) {
            throw denied("the caller's token is not valid" + (status == null || status.getError() == null ? "" : ": " + status.getError()));
        }
        if (status.getAudiences() == null || !status.getAudiences().contains(AUDIENCE)) {
            throw denied("the caller's token is not for audience " + AUDIENCE + " (it is for " + status.getAudiences() + ")");
        }
        String user = status.getUser().getUsername();
        String expected = "system:serviceaccount:" + namespace + ":" + serviceAccount;
        if (!expected.equals(user)) {
            throw denied("the caller is " + user + ", not the pool's node ServiceAccount " + expected);
        }
        Map<String, List<String>> extra = status.getUser().getExtra();
        String podName = single(extra, POD_NAME);
        String podUid = single(extra, POD_UID);
        if (podName == null || podUid == null) {
            throw denied("the caller's token is not bound to a pod (no " + POD_NAME + "/" + POD_UID + " in its review)");
        }
        Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        if (pod == null || !podUid.equals(pod.getMetadata().getUid())) {
            throw denied("the caller's pod " + namespace + "/" + podName + " (UID " + podUid + ") is gone");
        }
        if (!serviceAccount.equals(pod.getSpec().getServiceAccountName())) {
            throw denied("pod " + podName + " runs as " + pod.getSpec().getServiceAccountName() + ", not as " + serviceAccount);
        }
        boolean ofPool = pod.getMetadata().getOwnerReferences().stream().anyMatch(o -> isDaemonSet(o, daemonSet));
        if (!ofPool) {
            throw denied("pod " + podName + " is not controlled by the pool's DaemonSet " + daemonSet);
        }
        String node = pod.getSpec().getNodeName();
        if (node == null || node.isEmpty()) {
            throw denied("pod " + podName + " is on no node");
        }
        LoopPoolNode published = client.resources(LoopPoolNode.class).withName(HandoffNames.poolNode(pool, node)).get();
        String pin = published == null || published.getStatus() == null ? null : published.getStatus().getTransferCertificateSha256();
        if (!caller.certificateFingerprint().equals(pin)) {
            throw denied("the caller (pod " + podName + " on node " + node + ") presented certificate " + caller.certificateFingerprint()
                    + ", node " + node + " published " + pin);
        }
        return node;
    }

    private static boolean isDaemonSet(OwnerReference o, String name) {
        return Boolean.TRUE.equals(o.getController()) && "DaemonSet".equals(o.getKind()) && name.equals(o.getName())
                && o.getApiVersion() != null && o.getApiVersion().startsWith("apps/");
    }

    private static String single(Map<String, List<String>> extra, String key) {
        List<String> v = extra == null ? null : extra.get(key);
        return v == null || v.size() != 1 ? null : v.get(0);
    }

    private static TransferException denied(String message) {
        return new TransferException(TransferException.Kind.DENIED, message);
    }
}
