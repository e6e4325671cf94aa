/**
 * The hand-off between the controller role and the node role: internal, cluster-scoped custom
 * resources in loopcsi.io/v1alpha1. The controller writes intent ({@link LoopVolume},
 * {@link LoopSnapshot}, {@link LoopGroupSnapshot}), the node of the object's {@code spec.node} carries it out with its local
 * engine and answers in {@code status}; each node publishes its capacity in a {@link LoopPoolNode}.
 * Object names are the CSI IDs prefixed by the pool ({@link HandoffNames}), so a retried call finds
 * the same object and two pools never collide.
 */
package io.loopcsi.handoff;
