package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.GroupSnapshotMeta;
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

    @Test
    void readyListsEachMemberWithItsVolumeAndSize() {
        GroupSnapshotMeta m = new GroupSnapshotMeta("group-0", "g", List.of("vol-a", "vol-b"), List.of("snap-a", "snap-b"), 1_700_000_000_000L);
        LoopGroupSnapshotStatus s = GroupSnapshotHandler.ready(object(3), m, List.of(1L << 30, 2L << 30), "node-a");
        assertEquals(Phase.READY, s.getPhase());
        assertEquals("OK", s.getCode());
        assertEquals(3L, s.getObservedGeneration());
        assertTrue(s.getReadyToUse());
        assertEquals("2023-11-14T22:13:20Z", s.getCreationTime());
        assertEquals(List.of("snap-a:vol-a:1073741824", "snap-b:vol-b:2147483648"), s.getMembers().stream()
                .map(x -> x.getSnapshotId() + ":" + x.getSourceVolumeId() + ":" + x.getSizeBytes()).toList());
        assertEquals("group snapshot group-0 of 2 volumes is on node node-a", s.getMessage());
    }

    @Test
    void aLaterFailureKeepsTheMembersAndAnswersTheCurrentGeneration() {
        LoopGroupSnapshot g = object(4);
        GroupSnapshotMeta m = new GroupSnapshotMeta("group-0", "g", List.of("vol-a"), List.of("snap-a"), 0);
        g.setStatus(GroupSnapshotHandler.ready(object(3), m, List.of(1L), "node-a"));
        LoopGroupSnapshotStatus s = GroupSnapshotHandler.status(g, Phase.DELETE_FAILED, "ABORTED", "busy");
        assertEquals(Phase.DELETE_FAILED, s.getPhase());
        assertEquals("ABORTED", s.getCode());
        assertEquals(4L, s.getObservedGeneration());
        assertEquals(1, s.getMembers().size());
        assertTrue(g.created());
    }
}
