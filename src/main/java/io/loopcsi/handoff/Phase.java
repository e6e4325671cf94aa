package io.loopcsi.handoff;

/** Values of status.phase of LoopVolume, LoopSnapshot and LoopGroupSnapshot. */
public final class Phase {

    /** Not answered yet. */
    public static final String PENDING = "Pending";
    /** The node carried out the current spec. */
    public static final String READY = "Ready";
    /** The node refused or failed the current spec: status.code and status.message say why. */
    public static final String FAILED = "Failed";
    /** The object is being deleted and the node's last delete attempt failed (it keeps retrying). */
    public static final String DELETE_FAILED = "DeleteFailed";
    /** The node made it once, but its backing file is gone from the pool directory. */
    public static final String MISSING = "Missing";

    private Phase() {
    }
}
