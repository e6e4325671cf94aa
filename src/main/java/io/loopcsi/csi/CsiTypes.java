package io.loopcsi.csi;

import com.google.protobuf.Timestamp;

import csi.v1.Snapshot;
import csi.v1.Topology;
import csi.v1.Volume;
import csi.v1.VolumeCondition;
import csi.v1.VolumeContentSource;
import io.loopcsi.engine.Condition;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMeta;

/** Engine records to CSI messages. */
final class CsiTypes {

    /** The topology segment every loopcsi volume and node carries. */
    static final String TOPOLOGY_KEY = "topology.loopcsi.io/node";

    private CsiTypes() {
    }

    static Topology topology(String nodeId) {
        return Topology.newBuilder().putSegments(TOPOLOGY_KEY, nodeId).build();
    }

    static Volume volume(VolumeMeta v, String nodeId) {
        Volume.Builder b = Volume.newBuilder()
                .setVolumeId(v.id())
                .setCapacityBytes(v.capacityBytes())
                .addAccessibleTopology(topology(nodeId));
        if (v.sourceSnapshotId() != null) {
            b.setContentSource(VolumeContentSource.newBuilder()
                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(v.sourceSnapshotId())));
        } else if (v.sourceVolumeId() != null) {
            b.setContentSource(VolumeContentSource.newBuilder()
                    .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(v.sourceVolumeId())));
        }
        return b.build();
    }

    static Snapshot snapshot(SnapshotMeta s) {
        long ms = s.createdAtMillis();
        return Snapshot.newBuilder()
                .setSnapshotId(s.id())
                .setSourceVolumeId(s.sourceVolumeId())
                .setSizeBytes(s.sizeBytes())
                .setCreationTime(Timestamp.newBuilder().setSeconds(ms / 1000).setNanos((int) (ms % 1000) * 1_000_000))
                .setReadyToUse(true)
                .build();
    }

    static VolumeCondition condition(Condition c) {
        return VolumeCondition.newBuilder().setAbnormal(c.abnormal()).setMessage(c.message()).build();
    }
}
