package io.loopcsi.operator.desired;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

class VolumeGroupSnapshotClassSpecTest {

    /** external-snapshotter v8.6.0's CRD, as /work/shared/data keeps it beside the clone. */
    static final Path CRD = Path.of("../shared/data/sidecars/external-snapshotter-v8.6.0/client/config/crd/"
            + "groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml");

    @Test
    void oneClassOfThePoolsDriverThatDeletesItsGroupSnapshots() {
        List<io.fabric8.kubernetes.api.model.GenericKubernetesResource> all = VolumeGroupSnapshotClassSpec.desired(Pools.minimal("p1"), "v1");
        assertEquals(1, all.size());
        var c = all.get(0);
        assertEquals("groupsnapshot.storage.k8s.io/v1", c.getApiVersion());
        assertEquals("VolumeGroupSnapshotClass", c.getKind());
        assertEquals("p1-group-snapshots", c.getMetadata().getName());
        assertNull(c.getMetadata().getNamespace(), "cluster-scoped");
        assertEquals("p1.loopcsi.io", c.getAdditionalProperties().get("driver"));
        assertEquals("Delete", c.getAdditionalProperties().get("deletionPolicy"));
        assertFalse(c.getAdditionalProperties().containsKey("parameters"), "CreateVolumeGroupSnapshot takes no parameters");
        assertFalse(c.getAdditionalProperties().containsKey("spec"), "fields at the top level, as in the CRD");
        assertEquals("p1", c.getMetadata().getLabels().get(PoolNames.POOL), "found again by the pool label");
    }

    @Test
    void theServedVersionAndACustomDriver() {
        var p = Pools.minimal("p1");
        p.getSpec().setDriverName("custom.example.org");
        var c = VolumeGroupSnapshotClassSpec.desired(p, "v1beta1").get(0);
        assertEquals("groupsnapshot.storage.k8s.io/v1beta1", c.getApiVersion());
        assertEquals("custom.example.org", c.getAdditionalProperties().get("driver"));
    }

    @Test
    void theVersionsAreTheCrdsNewestFirst() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isRegularFile(CRD), "external-snapshotter v8.6.0's CRD in " + CRD);
        var crd = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(Files.readString(CRD),
                io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition.class);
        assertEquals(VolumeGroupSnapshotClassSpec.PLURAL + "." + VolumeGroupSnapshotClassSpec.GROUP, crd.getMetadata().getName());
        assertEquals(VolumeGroupSnapshotClassSpec.KIND, crd.getSpec().getNames().getKind());
        assertEquals("Cluster", crd.getSpec().getScope());
        assertEquals(java.util.Set.copyOf(VolumeGroupSnapshotClassSpec.VERSIONS),
                crd.getSpec().getVersions().stream().map(v -> v.getName()).collect(java.util.stream.Collectors.toSet()));
        for (var v : crd.getSpec().getVersions()) {
            var props = v.getSchema().getOpenAPIV3Schema().getProperties();
            assertEquals(List.of("deletionPolicy", "driver"), v.getSchema().getOpenAPIV3Schema().getRequired(), v.getName());
            assertEquals(List.of("Delete", "Retain"), props.get("deletionPolicy").getEnum().stream().map(e -> e.asText()).toList(), v.getName());
            assertEquals("object", props.get("parameters").getType(), v.getName());
        }
    }
}
