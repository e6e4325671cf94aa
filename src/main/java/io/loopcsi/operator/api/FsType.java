package io.loopcsi.operator.api;

/** Filesystems the node role can make on a volume (lower case: the value of csi.storage.k8s.io/fstype). */
public enum FsType {
    xfs,
    ext4
}
