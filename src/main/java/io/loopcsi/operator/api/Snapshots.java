package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/**
 * The pool's VolumeSnapshotClass, written where the snapshot.storage.k8s.io API (external-snapshotter's
 * CRDs) is served. Without one, no VolumeSnapshot of the pool's volumes can be taken.
 */
public class Snapshots {

    @JsonPropertyDescription("Name of the pool's VolumeSnapshotClass (driver: the pool's, deletionPolicy Delete); default <pool>-snapshots."
            + " A class of that name the pool does not own is never taken over (Ready=False, NameConflict).")
    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @Size(max = 253)
    private String className;

    @JsonPropertyDescription("Mark the class as the default VolumeSnapshotClass (annotation snapshot.storage.k8s.io/is-default-class);"
            + " default false.")
    @Default("false")
    private boolean defaultClass;

    public String getClassName() {
        return className;
    }

    public void setClassName(String className) {
        this.className = className;
    }

    public boolean isDefaultClass() {
        return defaultClass;
    }

    public void setDefaultClass(boolean defaultClass) {
        this.defaultClass = defaultClass;
    }
}
