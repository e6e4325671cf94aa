package io.loopcsi.cli.csc;

import java.util.List;

import csi.v1.GetPluginCapabilitiesRequest;
import csi.v1.GetPluginCapabilitiesResponse;
import csi.v1.GetPluginInfoRequest;
import csi.v1.GetPluginInfoResponse;
import csi.v1.PluginCapability;
import csi.v1.ProbeRequest;
import csi.v1.ProbeResponse;

/** {@code csc identity ...}: GetPluginInfo, GetPluginCapabilities, Probe. */
final class IdentityVerbs {

    private IdentityVerbs() {
    }

    static List<Verb> all() {
        return List.of(
                Verb.of("identity", "plugin-info", List.of("info"), "GetPluginInfo", "", 0, 0, List.of(), IdentityVerbs::pluginInfo),
                Verb.of("identity", "plugin-capabilities", List.of("caps"), "GetPluginCapabilities", "", 0, 0, List.of(),
                        IdentityVerbs::pluginCapabilities),
                Verb.of("identity", "probe", List.of(), "Probe", "", 0, 0, List.of(), IdentityVerbs::probe));
    }

    private static void pluginInfo(Verb.Call c) {
        GetPluginInfoResponse r = c.csi().identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        c.out().emit(r, () -> Lines.pluginInfo(r));
    }

    /** One capability per line: the service type, or the volume expansion type (ONLINE, OFFLINE). */
    private static void pluginCapabilities(Verb.Call c) {
        GetPluginCapabilitiesResponse r = c.csi().identity().getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance());
        c.out().emit(r, () -> {
            StringBuilder b = new StringBuilder();
            for (PluginCapability cap : r.getCapabilitiesList()) {
                switch (cap.getTypeCase()) {
                    case SERVICE -> b.append(cap.getService().getType()).append('\n');
                    case VOLUME_EXPANSION -> b.append(cap.getVolumeExpansion().getType()).append('\n');
                    default -> {
                        // a capability type newer than our proto: nothing to name
                    }
                }
            }
            return b.toString();
        });
    }

    /** {@code true} or {@code false}; an unset {@code ready} means ready (CSI spec). */
    private static void probe(Verb.Call c) {
        ProbeResponse r = c.csi().identity().probe(ProbeRequest.getDefaultInstance());
        c.out().emit(r, () -> (!r.hasReady() || r.getReady().getValue()) + "\n");
    }
}
