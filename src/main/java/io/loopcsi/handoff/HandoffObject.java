package io.loopcsi.handoff;

/** What the node's hand-off protocol asks of an object's status, whatever its kind. */
public interface HandoffObject {

    /** True once the node has made the object's files (they exist on disk, whatever the last operation did). */
    boolean created();

    /** True when the node answered the current spec (success or failure). */
    boolean answered();
}
