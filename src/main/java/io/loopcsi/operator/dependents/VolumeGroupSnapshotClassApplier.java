package io.loopcsi.operator.dependents;

import io.loopcsi.operator.ClassApiDiscovery;
import io.loopcsi.operator.desired.VolumeGroupSnapshotClassSpec;

/** The pool's VolumeGroupSnapshotClass ({@link VolumeGroupSnapshotClassSpec}), where groupsnapshot.storage.k8s.io is served. */
public class VolumeGroupSnapshotClassApplier extends GatedClassApplier {

    public VolumeGroupSnapshotClassApplier() {
        super(ClassApiDiscovery.GROUP_SNAPSHOT_CLASSES, VolumeGroupSnapshotClassSpec::desired);
    }
}
