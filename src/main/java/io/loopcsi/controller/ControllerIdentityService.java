package io.loopcsi.controller;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import com.google.protobuf.BoolValue;

import csi.v1.GetPluginCapabilitiesRequest;
import csi.v1.GetPluginCapabilitiesResponse;
import csi.v1.GetPluginInfoRequest;
import csi.v1.GetPluginInfoResponse;
import csi.v1.IdentityGrpc;
import csi.v1.PluginCapability;
import csi.v1.ProbeRequest;
import csi.v1.ProbeResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.loopcsi.csi.DriverConfig;
import io.quarkus.arc.lookup.LookupIfProperty;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;

/**
 * CSI Identity of the controller role: the same answers as the other roles' Identity, but ready
 * means "the API server answers" (there is no pool directory on the controller's machine).
 */
@GrpcService
@Blocking
@LookupIfProperty(name = "loopcsi.role", stringValue = "controller")
public class ControllerIdentityService extends IdentityGrpc.IdentityImplBase {

    private final DriverConfig config;
    private final String version;
    private final ApiVolumeProvider provider;

    ControllerIdentityService(DriverConfig config, @ConfigProperty(name = "quarkus.application.version") String version,
            ApiVolumeProvider provider) {
        this.config = config;
        this.version = version;
        this.provider = provider;
    }

    @Override
    public void getPluginInfo(GetPluginInfoRequest request, StreamObserver<GetPluginInfoResponse> observer) {
        observer.onNext(GetPluginInfoResponse.newBuilder().setName(config.driverName()).setVendorVersion(version).build());
        observer.onCompleted();
    }

    @Override
    public void getPluginCapabilities(GetPluginCapabilitiesRequest request, StreamObserver<GetPluginCapabilitiesResponse> observer) {
        GetPluginCapabilitiesResponse.Builder b = GetPluginCapabilitiesResponse.newBuilder()
                .addCapabilities(service(PluginCapability.Service.Type.CONTROLLER_SERVICE))
                .addCapabilities(service(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS))
                .addCapabilities(PluginCapability.newBuilder().setVolumeExpansion(
                        PluginCapability.VolumeExpansion.newBuilder().setType(PluginCapability.VolumeExpansion.Type.ONLINE)));
        if (provider.groupSnapshots()) { // through LoopGroupSnapshots (the GroupController is served beside the Controller)
            b.addCapabilities(service(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE));
        }
        observer.onNext(b.build());
        observer.onCompleted();
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> observer) {
        try {
            provider.capacity(); // reads the informers' caches: fails only if they are gone
            observer.onNext(ProbeResponse.newBuilder().setReady(BoolValue.of(true)).build());
            observer.onCompleted();
        } catch (RuntimeException e) {
            observer.onError(Status.FAILED_PRECONDITION.withDescription("controller not ready: " + e.getMessage()).asRuntimeException());
        }
    }

    private static PluginCapability service(PluginCapability.Service.Type type) {
        return PluginCapability.newBuilder().setService(PluginCapability.Service.newBuilder().setType(type)).build();
    }
}
