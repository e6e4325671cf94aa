package io.loopcsi.csi;

import com.google.protobuf.Timestamp;

import java.util.List;

import csi.v1.Snapshot;
import csi.v1.Topology;
import csi.v1.Volume;
import csi.v1.VolumeCondition;
import csi.v1.VolumeContentSource;
import csi.v1.VolumeGroupSnapshot;
import io.loopcsi.engine.GroupSnapshotMeta;
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
        Snapshot.Builder b = Snapshot.newBuilder()
                .setSnapshotId(s.id())
                .setSourceVolumeId(s.sourceVolumeId())
                .setSizeBytes(s.sizeBytes())
                .setCreationTime(timestamp(s.createdAtMillis()))
                .setReadyToUse(true);
        if (s.groupSnapshotId() != null) {
            b.setGroupSnapshotId(s.groupSnapshotId());
        }
        return b.build();
    }

    /** A group snapshot with the members that still exist; ready only while all of them do. */
    static VolumeGroupSnapshot groupSnapshot(GroupSnapshotMeta g, List<SnapshotMeta> members) {
        VolumeGroupSnapshot.Builder b = VolumeGroupSnapshot.newBuilder()
                .setGroupSnapshotId(g.id())
                .setCreationTime(timestamp(g.createdAtMillis()))
                .setReadyToUse(members.size() == g.snapshotIds().size());
        members.forEach(m -> b.addSnapshots(snapshot(m)));
        return b.build();
    }

    private static Timestamp timestamp(long ms) {
        return Timestamp.newBuilder().setSeconds(ms / 1000).setNanos((int) (ms % 1000) * 1_000_000).build();
    }

    static VolumeCondition condition(Condition c) {
        return VolumeCondition.newBuilder().setAbnormal(c.abnormal()).setMessage(c.message()).build();
    }
}
