package io.loopcsi.operator.api;

/** What happens to a released volume (StorageClass reclaimPolicy); Recycle is deprecated and not offered. */
public enum ReclaimPolicy {
    Delete,
    Retain
}
