package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.GroupSnapshotMeta;
import io.loopcsi.engine.SnapshotMeta;
import io.loopcsi.engine.VolumeMode;
import io.loopcsi.handoff.LoopGroupSnapshot;
import io.loopcsi.handoff.LoopGroupSnapshotSpec;
import io.loopcsi.handoff.LoopGroupSnapshotStatus;
import io.loopcsi.handoff.Phase;

/** How the node answers a LoopGroupSnapshot: members in the order of their volumes, a failure keeping what was made. */
class GroupAnswerTest {

    static LoopGroupSnapshot object(long generation) {
        LoopGroupSnapshot g = new LoopGroupSnapshot("rt.group-0", new LoopGroupSnapshotSpec());
        g.getMetadata().setGeneration(generation);
        return g;
    }

    static Optional<SnapshotMeta> member(String id, long size, int sectors) {
        return Optional.of(new SnapshotMeta(id, "g", "vol", size, VolumeMode.BLOCK, null, 0, "group-0", sectors));
    }

    @Test
    void readyListsEachMemberWithItsVolumeAndSize() {
        GroupSnapshotMeta m = new GroupSnapshotMeta("group-0", "g", List.of("vol-a", "vol-b"), List.of("snap-a", "snap-b"), 1_700_000_000_000L);
        LoopGroupSnapshotStatus s = GroupSnapshotHandler.ready(object(3), m, List.of(member("snap-a", 1L << 30, 4096), member("snap-b", 2L << 30, 512)),
                "node-a");
        assertEquals(Phase.READY, s.getPhase());
        assertEquals("OK", s.getCode());
        assertEquals(3L, s.getObservedGeneration());
        assertTrue(s.getReadyToUse());
        assertEquals("2023-11-14T22:13:20Z", s.getCreationTime());
        assertEquals(List.of("snap-a:vol-a:1073741824", "snap-b:vol-b:2147483648"), s.getMembers().stream()
                .map(x -> x.getSnapshotId() + ":" + x.getSourceVolumeId() + ":" + x.getSizeBytes()).toList());
        assertEquals("group snapshot group-0 of 2 volumes is on node node-a", s.getMessage());
        // a restore of a member on another node keeps its source's sectors (issue 35): a 4K-sector
        // block member must not come back with 512-byte sectors
        assertEquals(java.util.Arrays.asList(4096, 512), s.getMembers().stream().map(LoopGroupSnapshotStatus.Member::getLogicalBlockSize).toList());
    }

    @Test
    void aMemberGoneMeanwhileOrWithoutRecordedSectorsPublishesNoSectorSize() {
        GroupSnapshotMeta m = new GroupSnapshotMeta("group-0", "g", List.of("vol-a", "vol-b"), List.of("snap-a", "snap-b"), 0);
        LoopGroupSnapshotStatus s = GroupSnapshotHandler.ready(object(1), m, List.of(Optional.empty(), member("snap-b", 1L << 30, 0)), "node-a");
        assertEquals(java.util.Arrays.asList(null, null), s.getMembers().stream().map(LoopGroupSnapshotStatus.Member::getLogicalBlockSize).toList());
        assertEquals(List.of(0L, 1L << 30), s.getMembers().stream().map(LoopGroupSnapshotStatus.Member::getSizeBytes).toList());
    }

    @Test
    void aLaterFailureKeepsTheMembersAndAnswersTheCurrentGeneration() {
        LoopGroupSnapshot g = object(4);
        GroupSnapshotMeta m = new GroupSnapshotMeta("group-0", "g", List.of("vol-a"), List.of("snap-a"), 0);
        g.setStatus(GroupSnapshotHandler.ready(object(3), m, List.of(member("snap-a", 1L, 512)), "node-a"));
        LoopGroupSnapshotStatus s = GroupSnapshotHandler.status(g, Phase.DELETE_FAILED, "ABORTED", "busy");
        assertEquals(Phase.DELETE_FAILED, s.getPhase());
        assertEquals("ABORTED", s.getCode());
        assertEquals(4L, s.getObservedGeneration());
        assertEquals(1, s.getMembers().size());
        assertTrue(g.created());
    }
}
