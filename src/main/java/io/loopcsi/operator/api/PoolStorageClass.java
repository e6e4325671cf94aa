package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** One StorageClass the pool creates. */
public class PoolStorageClass {

    @JsonPropertyDescription("StorageClass name (a DNS subdomain).")
    @Required
    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @Size(max = 253)
    private String name;

    @JsonPropertyDescription("Filesystem (a mounted xfs/ext4 volume) or Block (a raw device); a PVC still chooses its own volumeMode.")
    @Default("Filesystem")
    private VolumeMode volumeMode = VolumeMode.Filesystem;

    @JsonPropertyDescription("Filesystem of Filesystem volumes; default: the pool's first fsType.")
    private FsType fsType;

    @JsonPropertyDescription("Delete or Retain; default Delete.")
    @Default("Delete")
    private ReclaimPolicy reclaimPolicy = ReclaimPolicy.Delete;

    @JsonPropertyDescription("Whether volumes may grow; default true.")
    @Default("true")
    private Boolean allowVolumeExpansion = true;

    @JsonPropertyDescription("Marks this class as the cluster's default StorageClass.")
    @Default("false")
    private Boolean isDefault = false;

    public PoolStorageClass() {
    }

    public PoolStorageClass(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public VolumeMode getVolumeMode() {
        return volumeMode;
    }

    public void setVolumeMode(VolumeMode volumeMode) {
        this.volumeMode = volumeMode;
    }

    public FsType getFsType() {
        return fsType;
    }

    public void setFsType(FsType fsType) {
        this.fsType = fsType;
    }

    public ReclaimPolicy getReclaimPolicy() {
        return reclaimPolicy;
    }

    public void setReclaimPolicy(ReclaimPolicy reclaimPolicy) {
        this.reclaimPolicy = reclaimPolicy;
    }

    public Boolean getAllowVolumeExpansion() {
        return allowVolumeExpansion;
    }

    public void setAllowVolumeExpansion(Boolean allowVolumeExpansion) {
        this.allowVolumeExpansion = allowVolumeExpansion;
    }

    public Boolean getIsDefault() {
        return isDefault;
    }

    public void setIsDefault(Boolean isDefault) {
        this.isDefault = isDefault;
    }
}
