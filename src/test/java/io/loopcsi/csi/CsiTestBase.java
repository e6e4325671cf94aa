package io.loopcsi.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.function.Executable;

import csi.v1.DeleteSnapshotRequest;
import csi.v1.DeleteVolumeRequest;
import csi.v1.NodePublishVolumeRequest;
import csi.v1.NodeStageVolumeRequest;
import csi.v1.NodeUnpublishVolumeRequest;
import csi.v1.NodeUnstageVolumeRequest;
import csi.v1.VolumeCapability;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.engine.MountTable;
import io.loopcsi.testing.CsiClient;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.StandaloneDriverResource;

/**
 * Talks to the standalone driver under test over its unix socket. Each test gets its own
 * directory for staging and target paths; whatever a test leaves mounted or attached (because
 * it failed half-way) is released afterwards, and the volumes and snapshots it made are deleted.
 */
abstract class CsiTestBase {

    static CsiClient csi;
    Path mnt;
    final List<String> volumes = new ArrayList<>();
    final List<String> snapshots = new ArrayList<>();

    @BeforeAll
    static void connect() {
        csi = new CsiClient(StandaloneDriverResource.socket());
    }

    @AfterAll
    static void disconnect() {
        csi.close();
    }

    @BeforeEach
    void makeMountDir() throws IOException {
        mnt = Files.createTempDirectory(StandaloneDriverResource.dir(), "mnt-");
    }

    @AfterEach
    void releaseEverything() {
        KernelCleanup.unmountUnder(mnt.toString());
        KernelCleanup.detachUnder(StandaloneDriverResource.dir().resolve("pool").toString());
        for (String s : snapshots) {
            csi.controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).build());
        }
        for (String v : volumes) {
            csi.controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v).build());
        }
        KernelCleanup.deleteTree(mnt);
    }

    String createVolume(String name, VolumeCapability cap, long bytes) {
        String id = csi.controller.createVolume(Csi.create(name, cap, bytes)).getVolume().getVolumeId();
        volumes.add(id);
        return id;
    }

    void stage(String id, Path staging, VolumeCapability cap) {
        csi.node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(cap).build());
    }

    void publish(String id, Path staging, Path target, VolumeCapability cap, boolean readOnly) {
        csi.node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(cap).setReadonly(readOnly).build());
    }

    void stageAndPublish(String id, Path staging, Path target, VolumeCapability cap) {
        stage(id, staging, cap);
        publish(id, staging, target, cap, false);
    }

    void unpublishAndUnstage(String id, Path staging, Path target) {
        unpublish(id, target);
        unstage(id, staging);
    }

    void unpublish(String id, Path target) {
        csi.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
    }

    void unstage(String id, Path staging) {
        csi.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
    }

    static StatusRuntimeException assertCode(Status.Code code, Executable call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(code, e.getStatus().getCode(), () -> "unexpected status: " + e.getStatus());
        return e;
    }

    static boolean isMountPoint(Path p) {
        return MountTable.read().at(p).isPresent();
    }
}
