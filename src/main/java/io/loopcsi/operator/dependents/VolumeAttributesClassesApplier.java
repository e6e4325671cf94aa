package io.loopcsi.operator.dependents;

import io.loopcsi.operator.ClassApiDiscovery;
import io.loopcsi.operator.desired.VolumeAttributesClasses;

/** The pool's VolumeAttributesClasses ({@link VolumeAttributesClasses}), where storage.k8s.io serves volumeattributesclasses. */
public class VolumeAttributesClassesApplier extends GatedClassApplier {

    public VolumeAttributesClassesApplier() {
        super(ClassApiDiscovery.VOLUME_ATTRIBUTES_CLASSES, VolumeAttributesClasses::desired);
    }
}
