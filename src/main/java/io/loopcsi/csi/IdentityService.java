package io.loopcsi.csi;

import java.nio.file.Files;

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
import io.loopcsi.engine.PoolDirectory;
import io.quarkus.arc.lookup.LookupUnlessProperty;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;

/** CSI Identity: who we are, what we offer, whether we can serve. */
@GrpcService
@Blocking
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "controller", lookupIfMissing = true)
@LookupUnlessProperty(name = "loopcsi.role", stringValue = "operator", lookupIfMissing = true)
public class IdentityService extends IdentityGrpc.IdentityImplBase {

    private final DriverConfig config;
    private final String version;
    private final PoolDirectory pool;

    IdentityService(DriverConfig config, @ConfigProperty(name = "quarkus.application.version") String version, PoolDirectory pool) {
        this.config = config;
        this.version = version;
        this.pool = pool;
    }

    @Override
    public void getPluginInfo(GetPluginInfoRequest request, StreamObserver<GetPluginInfoResponse> observer) {
        GrpcErrors.answer("GetPluginInfo", observer, () -> GetPluginInfoResponse.newBuilder()
                .setName(config.driverName())
                .setVendorVersion(version)
                .build());
    }

    @Override
    public void getPluginCapabilities(GetPluginCapabilitiesRequest request, StreamObserver<GetPluginCapabilitiesResponse> observer) {
        GrpcErrors.answer("GetPluginCapabilities", observer, () -> {
            GetPluginCapabilitiesResponse.Builder b = GetPluginCapabilitiesResponse.newBuilder()
                    .addCapabilities(service(PluginCapability.Service.Type.CONTROLLER_SERVICE))
                    .addCapabilities(service(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS))
                    .addCapabilities(PluginCapability.newBuilder().setVolumeExpansion(
                            PluginCapability.VolumeExpansion.newBuilder().setType(PluginCapability.VolumeExpansion.Type.ONLINE)));
            if (GroupControllerService.SERVED_IN.equals(config.role())) {
                b.addCapabilities(service(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE));
            }
            return b.build();
        });
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> observer) {
        GrpcErrors.answer("Probe", observer, () -> {
            if (!Files.isDirectory(pool.root()) || !Files.isWritable(pool.root())) {
                throw Status.FAILED_PRECONDITION.withDescription("pool directory " + pool.root() + " is missing or not writable")
                        .asRuntimeException();
            }
            return ProbeResponse.newBuilder().setReady(BoolValue.of(true)).build();
        });
    }

    private static PluginCapability service(PluginCapability.Service.Type type) {
        return PluginCapability.newBuilder().setService(PluginCapability.Service.newBuilder().setType(type)).build();
    }
}
