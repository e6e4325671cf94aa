package io.loopcsi.csi;

import csi.v1.CapacityRange;
import csi.v1.CreateVolumeRequest;
import csi.v1.VolumeCapability;

/** Request builders shared by the CSI tests. */
final class Csi {

    static final long MIB = 1L << 20;

    private Csi() {
    }

    static VolumeCapability block() {
        return VolumeCapability.newBuilder()
                .setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(mode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                .build();
    }

    static VolumeCapability mount(String fsType, String... flags) {
        return VolumeCapability.newBuilder()
                .setMount(VolumeCapability.MountVolume.newBuilder().setFsType(fsType).addAllMountFlags(java.util.List.of(flags)))
                .setAccessMode(mode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                .build();
    }

    static VolumeCapability.AccessMode mode(VolumeCapability.AccessMode.Mode m) {
        return VolumeCapability.AccessMode.newBuilder().setMode(m).build();
    }

    static CreateVolumeRequest create(String name, VolumeCapability cap, long requiredBytes) {
        return CreateVolumeRequest.newBuilder()
                .setName(name)
                .addVolumeCapabilities(cap)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(requiredBytes))
                .build();
    }
}
