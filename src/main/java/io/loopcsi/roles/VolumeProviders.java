package io.loopcsi.roles;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;

import io.loopcsi.controller.ApiVolumeProvider;
import io.loopcsi.csi.DriverConfig;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.engine.VolumeProvider;

/**
 * Which volume provider serves a role's CSI services (and the node role's hand-off work): the
 * one place that maps a role to its provider. It sits above csi/, controller/ and node/, so that
 * none of them imports another to choose: standalone and node get the local engine
 * (csi.EngineBeans), controller the API-backed provider (controller.ControllerBeans), which makes
 * volumes through LoopVolume objects and needs no pool directory.
 */
public class VolumeProviders {

    /**
     * Application-scoped (a lazy proxy): the provider, and with the engine the recovery of the
     * pool directory, is made at its first use, so that a role serving no CSI (operator) never
     * touches a pool and the controller role never opens one.
     */
    @Produces
    @ApplicationScoped
    VolumeProvider provider(DriverConfig config, Instance<VolumeEngine> engine, Instance<ApiVolumeProvider> api) {
        return switch (config.role()) {
            case "operator" -> throw new IllegalStateException("the operator role serves no CSI volumes");
            case "controller" -> api.get();
            default -> engine.get(); // standalone, node
        };
    }
}
