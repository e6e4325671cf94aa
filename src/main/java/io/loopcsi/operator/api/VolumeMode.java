package io.loopcsi.operator.api;

/** How a StorageClass' volumes are handed out: a mounted filesystem or a raw block device. */
public enum VolumeMode {
    Filesystem,
    Block
}
