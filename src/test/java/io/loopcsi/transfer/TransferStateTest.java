package io.loopcsi.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The destination's progress file across releases: what an earlier release saved is resumed in the format it was made in. */
class TransferStateTest {

    static final long MIB = 1 << 20;

    @TempDir
    Path data;

    static TransferPlan plan(DigestFormat f) {
        return new TransferPlan("pool-a.t1", "snap-1", 4 * MIB, (int) MIB, RangeList.of(4 * MIB, List.of(new Range(0, 2 * MIB))), f,
                "ab".repeat(32));
    }

    @Test
    void aProgressFileOfAnEarlierReleaseIsAV1PlanAndGoesOnOnlyWithAV1Plan() throws Exception {
        // what a node before digest formats saved (TransferState.Saved without digestFormat): chunks 0 and 1 done
        Path file = TransferState.fileOf(data, "pool-a.t1");
        Files.createDirectories(file.getParent());
        Files.writeString(file, "{\"transferId\":\"pool-a.t1\",\"source\":\"snap-1\",\"size\":4194304,\"chunkSize\":1048576,"
                + "\"ranges\":[[0,2097152]],\"digest\":\"" + "ab".repeat(32) + "\",\"done\":\"Aw==\"}", StandardCharsets.US_ASCII);

        assertEquals(Optional.of(DigestFormat.SHA256_V1), TransferState.savedFormat(data, "pool-a.t1"));
        TransferState v1 = TransferState.openOrStart(data, plan(DigestFormat.SHA256_V1));
        assertTrue(v1.resumed());
        assertEquals(2, v1.nextChunk());
        assertFalse(TransferState.openOrStart(data, plan(DigestFormat.CRC_V2)).resumed(), "another format is another plan: start over");
    }

    @Test
    void aSavedPlanKeepsItsFormat() {
        TransferState s = TransferState.fresh(data, plan(DigestFormat.CRC_V2));
        s.markDone(0);
        s.save();
        assertEquals(Optional.of(DigestFormat.CRC_V2), TransferState.savedFormat(data, "pool-a.t1"));
        assertEquals(1, TransferState.openOrStart(data, plan(DigestFormat.CRC_V2)).nextChunk());
        assertFalse(TransferState.openOrStart(data, plan(DigestFormat.SHA256_V1)).resumed());
        assertEquals(Optional.empty(), TransferState.savedFormat(data, "pool-a.other"), "no progress: no format");
    }
}
