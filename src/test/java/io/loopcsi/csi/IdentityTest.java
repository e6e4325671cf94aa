package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import csi.v1.GetPluginCapabilitiesRequest;
import csi.v1.GetPluginInfoRequest;
import csi.v1.GetPluginInfoResponse;
import csi.v1.GroupControllerGetCapabilitiesRequest;
import csi.v1.GroupControllerServiceCapability;
import csi.v1.PluginCapability;
import csi.v1.ProbeRequest;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class IdentityTest extends CsiTestBase {

    @Test
    void pluginInfoNamesTheDriverAndItsVersion() {
        GetPluginInfoResponse info = csi.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        assertEquals("loopcsi.io", info.getName());
        assertEquals("0.1.0", info.getVendorVersion());
    }

    @Test
    void probeSaysReady() {
        assertTrue(csi.identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue());
    }

    @Test
    void advertisesControllerTopologyAndOnlineExpansion() {
        var caps = csi.identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
        assertTrue(caps.stream().anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.CONTROLLER_SERVICE));
        assertTrue(caps.stream().anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS));
        assertTrue(caps.stream().anyMatch(c -> c.getVolumeExpansion().getType() == PluginCapability.VolumeExpansion.Type.ONLINE));
        // standalone serves the GroupController, and says so there too
        assertTrue(caps.stream().anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE));
        assertEquals(List.of(GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT),
                csi.group.groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()
                        .stream().map(c -> c.getRpc().getType()).toList());
    }
}
