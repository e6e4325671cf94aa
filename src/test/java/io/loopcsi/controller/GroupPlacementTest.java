package io.loopcsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.loopcsi.controller.GroupPlacement.Source;
import io.loopcsi.engine.EngineException;

/** Which node makes a group snapshot, and the precise refusals when none can. */
class GroupPlacementTest {

    @Test
    void theNodeHoldingEveryMember() {
        assertEquals("node-a", GroupPlacement.node(List.of(new Source("vol-1", "node-a", false), new Source("vol-2", "node-a", false))));
    }

    @Test
    void membersOnSeveralNodesAreAFailedPreconditionNamingEachVolumeAndNode() {
        EngineException e = assertThrows(EngineException.class, () -> GroupPlacement.node(List.of(new Source("vol-1", "node-b", false),
                new Source("vol-2", "node-a", false), new Source("vol-3", "node-b", false))));
        assertEquals(EngineException.Kind.FAILED_PRECONDITION, e.kind());
        assertEquals("source_volume_ids: the volumes live on 2 nodes (vol-2 on node node-a; vol-1, vol-3 on node node-b); node-local "
                + "volumes can be snapshotted together only on one node, where they are frozen at one instant; nothing was created",
                e.getMessage());
    }

    @Test
    void missingAndDeletingVolumesAreNamed() {
        EngineException e = assertThrows(EngineException.class, () -> GroupPlacement.node(List.of(new Source("vol-1", null, false),
                new Source("vol-2", "node-a", true), new Source("vol-3", null, false))));
        assertEquals(EngineException.Kind.NOT_FOUND, e.kind());
        assertEquals("source_volume_ids: vol-1, vol-3 do not exist", e.getMessage());
        e = assertThrows(EngineException.class, () -> GroupPlacement.node(List.of(new Source("vol-2", "node-a", true))));
        assertEquals(EngineException.Kind.FAILED_PRECONDITION, e.kind());
        assertEquals("source_volume_ids: vol-2 is being deleted", e.getMessage());
    }
}
