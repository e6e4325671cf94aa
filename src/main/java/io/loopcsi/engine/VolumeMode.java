package io.loopcsi.engine;

/** How a volume is consumed: as a raw block device or as a mounted filesystem. */
public enum VolumeMode {
    BLOCK, FILESYSTEM
}
