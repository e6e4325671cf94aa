package io.loopcsi.csi;

import static io.loopcsi.testing.Data.randomBytes;
import static io.loopcsi.testing.Data.readAt;
import static io.loopcsi.testing.Data.writeAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import csi.v1.NodeGetVolumeStatsRequest;
import csi.v1.VolumeCapability;
import io.grpc.Status;
import io.loopcsi.testing.KernelCleanup;
import io.loopcsi.testing.StandaloneDriverResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * A pod may use any claim read-only: kubelet then calls NodePublishVolume with readonly=true for a
 * block volume it staged read-write (the Kubernetes storage suite's "should concurrently access the
 * single read-only volume from pods on the same node", block volmode, issue 21). On real loop
 * devices: the read-only targets see what the writer wrote and cannot write themselves, they share
 * one read-only device, the last read-only unpublish detaches it, and unstage still waits for every
 * target.
 */
@QuarkusTest
@QuarkusTestResource(StandaloneDriverResource.class)
class ReadOnlyBlockPublishTest extends CsiTestBase {

    @Test
    void readOnlyPublishOfAReadWriteStagedBlockVolumeGetsADeviceThatRefusesWrites() throws IOException {
        VolumeCapability cap = Csi.block();
        String id = createVolume("ro-block", cap, 16 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        Path writer = mnt.resolve("writer");
        Path reader1 = mnt.resolve("reader1");
        Path reader2 = mnt.resolve("reader2");
        stageAndPublish(id, staging, writer, cap);
        byte[] data = randomBytes(1 << 16, 7);
        writeAt(writer, 1 << 20, data);

        publish(id, staging, reader1, cap, true);
        publish(id, staging, reader1, cap, true); // idempotent
        publish(id, staging, reader2, cap, true);
        assertEquals(2, devices().size(), "the read-write device and one read-only device for both readers: " + devices());

        assertArrayEquals(data, readAt(reader1, 1 << 20, data.length), "a reader sees what the writer wrote");
        assertArrayEquals(data, readAt(reader2, 1 << 20, data.length));
        assertThrows(IOException.class, () -> writeAt(reader1, 0, new byte[4096]), "a read-only target refuses writes");
        assertFalse(csi.node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id).setVolumePath(reader1.toString())
                .build()).getVolumeCondition().getAbnormal(), "stats answer at a read-only target");
        assertCode(Status.Code.ALREADY_EXISTS, () -> publish(id, staging, reader1, cap, false));

        unpublish(id, reader1);
        assertEquals(2, devices().size(), "reader2 still uses the read-only device");
        assertCode(Status.Code.FAILED_PRECONDITION, () -> unstage(id, staging));
        unpublish(id, reader2);
        assertEquals(1, devices().size(), "the last read-only unpublish detaches the read-only device");
        assertFalse(Files.exists(reader2));

        unpublish(id, writer);
        unstage(id, staging);
        assertTrue(devices().isEmpty(), "unstage leaves no device: " + devices());

        stageAndPublish(id, staging, writer, cap);
        assertArrayEquals(data, readAt(writer, 1 << 20, data.length), "the data is intact");
        unpublishAndUnstage(id, staging, writer);
    }

    @Test
    void aFailedReadOnlyPublishLeavesNoDeviceBehind() throws IOException {
        VolumeCapability cap = Csi.block();
        String id = createVolume("ro-block-fail", cap, 8 * Csi.MIB);
        Path staging = mnt.resolve("staging");
        stage(id, staging, cap);
        Path dir = Files.createDirectories(mnt.resolve("a-directory"));
        assertCode(Status.Code.FAILED_PRECONDITION, () -> publish(id, staging, dir, cap, true));
        assertEquals(1, devices().size(), "only the staged device: " + devices());
        unstage(id, staging);
        assertTrue(devices().isEmpty());
    }

    private static java.util.List<String> devices() {
        return KernelCleanup.loopDevicesUnder(StandaloneDriverResource.dir());
    }
}
