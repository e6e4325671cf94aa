package io.loopcsi.controller;

import java.time.Clock;

import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Singleton;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.csi.DriverConfig;

/** Wires the controller role's API-backed provider (roles.VolumeProviders hands it to the Controller service in that role). */
public class ControllerBeans {

    @Produces
    @Singleton
    @Typed(ApiVolumeProvider.class) // not a VolumeProvider bean: roles.VolumeProviders decides which provider a role gets
    ApiVolumeProvider apiProvider(DriverConfig config, ControllerRoleConfig controller, Instance<KubernetesClient> clients) {
        String pool = controller.pool().filter(p -> !p.isBlank())
                .orElseThrow(() -> new IllegalStateException("the controller role needs --pool (the StoragePool it serves)"));
        return new ApiVolumeProvider(clients.get(), pool, config.driverName(), controller.answerTimeout(), controller.nodeStaleAfter(),
                Clock.systemUTC()).start();
    }

    void close(@Disposes ApiVolumeProvider provider) {
        provider.close();
    }
}
