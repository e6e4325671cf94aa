package io.loopcsi.transfer.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.grpc.KnownLength;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.loopcsi.transfer.Chunk;
import io.loopcsi.transfer.DigestFormat;
import io.loopcsi.transfer.ContentDigest;
import io.loopcsi.transfer.Segment;
import io.loopcsi.transfer.v1.ChunkMessage;

/** A chunk's way through the wire form and the destination's parsing (Messages.CHUNKS): intact, and not copied more than once. */
class MessagesChunkTest {

    static final int MIB = 1 << 20;

    @Test
    void aChunkParsedFromAKnownLengthStreamIsIntactAndItsSegmentsAreSlicesOfOneArray() throws IOException {
        Chunk sent = chunk();
        Chunk got = Messages.fromWire(Messages.CHUNKS.parse(new Known(wire(sent))));
        assertSameContent(sent, got);
        // not copied out of the message: both segments are slices of the one array the message was read into
        assertSame(got.segments().get(0).array(), got.segments().get(1).array());
        assertTrue(got.segments().get(0).from() > 0);
        assertTrue(got.segments().get(0).array().length > got.dataBytes());
    }

    @Test
    void aChunkWrittenGivesItsArrayToTheNextMessageWhichParsesIntactInIt() throws IOException {
        ChunkArrays arrays = new ChunkArrays();
        var marshaller = Messages.chunks(arrays);
        Chunk first = Messages.fromWire(marshaller.parse(new Known(wire(chunk()))));
        byte[] array = first.segments().get(0).array();
        Chunk notYetWritten = Messages.fromWire(marshaller.parse(new Known(wire(chunk()))));
        assertNotSame(array, notYetWritten.segments().get(0).array(), "an array not given back is never handed out again");
        arrays.give(first);
        // a shorter message in the longer array: its bounds, not the array's, end the message
        Chunk second = new Chunk(8, List.of(new Segment(8L * MIB, random(100 * 1024, 3))), null);
        second = new Chunk(8, second.segments(), ContentDigest.chunkHash(DigestFormat.CRC_V2, 8L * MIB, MIB, second.segments()));
        Chunk got = Messages.fromWire(marshaller.parse(new Known(wire(second))));
        assertSame(array, got.segments().get(0).array());
        assertEquals(1, got.segments().size());
        assertArrayEquals(second.segments().get(0).data(), got.segments().get(0).data());
        assertArrayEquals(second.hash(), got.hash());
        assertEquals(2, arrays.made());
    }

    @Test
    void aChunkOfHolesTakesNoArrayThatItCouldNotGiveBack() throws IOException {
        ChunkArrays arrays = new ChunkArrays();
        var marshaller = Messages.chunks(arrays);
        Chunk data = Messages.fromWire(marshaller.parse(new Known(wire(chunk()))));
        arrays.give(data);
        Chunk holes = new Chunk(9, List.of(), ContentDigest.chunkHash(DigestFormat.CRC_V2, 9L * MIB, MIB, List.of()));
        Chunk got = Messages.fromWire(marshaller.parse(new Known(wire(holes))));
        assertEquals(0, got.segments().size());
        arrays.give(got); // nothing to give: its message's array is not the pooled one
        Chunk next = Messages.fromWire(marshaller.parse(new Known(wire(chunk()))));
        assertSame(data.segments().get(0).array(), next.segments().get(0).array());
        assertEquals(1, arrays.made());
    }

    @Test
    void atMostKeptArraysWaitToBeUsedAgain() throws IOException {
        ChunkArrays arrays = new ChunkArrays();
        var marshaller = Messages.chunks(arrays);
        List<Chunk> written = new java.util.ArrayList<>();
        for (int i = 0; i < ChunkArrays.KEPT + 2; i++) {
            written.add(Messages.fromWire(marshaller.parse(new Known(wire(chunk())))));
        }
        written.forEach(arrays::give);
        for (int i = 0; i < ChunkArrays.KEPT + 2; i++) {
            marshaller.parse(new Known(wire(chunk())));
        }
        assertEquals(ChunkArrays.KEPT + 2 + 2, arrays.made(), "the arrays past KEPT are left to the collector");
    }

    @Test
    void aStreamOfUnknownLengthIsParsedByTheGeneratedMarshaller() throws IOException {
        Chunk sent = chunk();
        InputStream unknown = new InputStream() {
            private final InputStream in = new ByteArrayInputStream(wire(sent));

            @Override
            public int read() throws IOException {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return in.read(b, off, len);
            }
        };
        assertSameContent(sent, Messages.fromWire(Messages.CHUNKS.parse(unknown)));
    }

    @Test
    void aMessageShorterThanItsLengthIsRefused() throws IOException {
        byte[] whole = wire(chunk());
        Known shortened = new Known(Arrays.copyOf(whole, whole.length - 10)) {
            @Override
            public synchronized int available() {
                return super.available() + 10; // claims the bytes it lacks
            }
        };
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> Messages.CHUNKS.parse(shortened));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
    }

    @Test
    void aSegmentIsItsSliceOfTheArray() {
        byte[] a = { 1, 2, 3, 4, 5, 6 };
        Segment s = new Segment(100, a, 2, 3);
        assertEquals(103, s.end());
        assertArrayEquals(new byte[] { 3, 4, 5 }, s.data());
        assertEquals(3, s.buffer().remaining());
        assertEquals(3, s.buffer().get(0));
        assertSame(a, new Segment(0, a).data());
        assertThrows(IllegalArgumentException.class, () -> new Segment(0, a, 4, 3));
    }

    private static void assertSameContent(Chunk sent, Chunk got) {
        assertEquals(sent.index(), got.index());
        assertArrayEquals(sent.hash(), got.hash());
        assertEquals(sent.segments().size(), got.segments().size());
        for (int i = 0; i < sent.segments().size(); i++) {
            assertEquals(sent.segments().get(i).offset(), got.segments().get(i).offset());
            assertArrayEquals(sent.segments().get(i).data(), got.segments().get(i).data());
        }
        assertArrayEquals(ContentDigest.chunkHash(DigestFormat.CRC_V2, 7L * MIB, MIB, sent.segments()), ContentDigest.chunkHash(DigestFormat.CRC_V2, 7L * MIB, MIB, got.segments()));
    }

    private static Chunk chunk() {
        byte[] a = random(300 * 1024, 1);
        byte[] b = random(64 * 1024, 2);
        List<Segment> segments = List.of(new Segment(7L * MIB + 4096, a), new Segment(7L * MIB + 512 * 1024, b));
        return new Chunk(7, segments, ContentDigest.chunkHash(DigestFormat.CRC_V2, 7L * MIB, MIB, segments));
    }

    private static byte[] wire(Chunk c) throws IOException {
        return Messages.CHUNKS.stream(Messages.toWire(c)).readAllBytes();
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** What gRPC hands a marshaller: a stream that knows its length. */
    static class Known extends ByteArrayInputStream implements KnownLength {
        Known(byte[] b) {
            super(b);
        }
    }
}
