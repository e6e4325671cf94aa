package io.loopcsi.operator.api;

/**
 * What the operator does about the claims of a node that is gone (its Node object deleted, its
 * node plugin silent). A node that only stopped reporting is never acted on, whatever the policy.
 */
public enum LostNodePolicy {
    /** Report it (status, Event, metric, alert); the claims stay bound until an admin deletes them. */
    Keep,
    /**
     * Also delete the PersistentVolumeClaims and PersistentVolumes of its volumes and release their
     * LoopVolumes, so that a StatefulSet re-creates the claim and its pod gets a new volume elsewhere.
     * The data was on that node and is lost with it.
     */
    ReleaseClaims
}
