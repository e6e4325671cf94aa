package io.loopcsi.transfer.service;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;

import io.loopcsi.transfer.Chunk;
import io.loopcsi.transfer.DigestFormat;
import io.loopcsi.transfer.Range;
import io.loopcsi.transfer.RangeList;
import io.loopcsi.transfer.Segment;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferPlan;
import io.loopcsi.transfer.v1.ChunkMessage;
import io.loopcsi.transfer.v1.DataRange;
import io.loopcsi.transfer.v1.PlanReply;

/** The wire form of the core's records and back; what comes in is checked by the records' own rules (TransferPlan, RangeList). */
final class Messages {

    private Messages() {
    }

    static PlanReply toWire(TransferPlan p) {
        PlanReply.Builder b = PlanReply.newBuilder().setTransferId(p.transferId()).setSource(p.source()).setSize(p.size())
                .setChunkSize(p.chunkSize()).setDigest(p.digest()).setDigestFormat(p.format().wireName());
        for (Range r : p.ranges().ranges()) {
            b.addRanges(DataRange.newBuilder().setOffset(r.offset()).setLength(r.length()));
        }
        return b.build();
    }

    /**
     * The plan the source announced; INVALID when it breaks the plan's rules (ranges, chunk size, digest form)
     * or is hashed in a format the client did not offer ({@code offered}). No format named: a source of a
     * release before formats were negotiated, which plans in v1.
     */
    static TransferPlan fromWire(PlanReply p, List<DigestFormat> offered) {
        List<Range> ranges = new ArrayList<>(p.getRangesCount());
        for (DataRange r : p.getRangesList()) {
            ranges.add(new Range(r.getOffset(), r.getLength()));
        }
        DigestFormat format = p.getDigestFormat().isEmpty() ? DigestFormat.SHA256_V1 : DigestFormat.named(p.getDigestFormat()).orElse(null);
        if (format == null || !offered.contains(format)) {
            throw new TransferException(TransferException.Kind.INVALID, "the source planned transfer " + p.getTransferId() + " in digest format \""
                    + (p.getDigestFormat().isEmpty() ? DigestFormat.SHA256_V1.wireName() : p.getDigestFormat()) + "\", not one this node offered "
                    + offered.stream().map(DigestFormat::wireName).toList());
        }
        return new TransferPlan(p.getTransferId(), p.getSource(), p.getSize(), p.getChunkSize(), RangeList.of(p.getSize(), ranges),
                format, p.getDigest());
    }

    /**
     * Wraps the chunk's arrays without copying them (a copy of each 1 MiB chunk was measurable):
     * safe because the message is serialised into gRPC's buffers within the onNext it is given to
     * (TransferService.Pump), and the chunk's array is written again (the Pump's next read) only
     * after that.
     */
    static ChunkMessage toWire(Chunk c) {
        ChunkMessage.Builder b = ChunkMessage.newBuilder().setIndex(c.index()).setHash(UnsafeByteOperations.unsafeWrap(c.hash()));
        for (Segment s : c.segments()) {
            b.addSegments(io.loopcsi.transfer.v1.Segment.newBuilder().setOffset(s.offset())
                    .setData(UnsafeByteOperations.unsafeWrap(s.array(), s.from(), s.length())));
        }
        return b.build();
    }

    /**
     * The chunk of a message, its segments' bytes not copied: where the message was parsed by
     * {@link #CHUNKS} they are slices of the one array the message was received into (of this
     * chunk alone, never written after); a segment whose bytes are not one slice of an array (a
     * message parsed otherwise) is copied.
     */
    static Chunk fromWire(ChunkMessage m) {
        List<Segment> segments = new ArrayList<>(m.getSegmentsCount());
        for (io.loopcsi.transfer.v1.Segment s : m.getSegmentsList()) {
            segments.add(segmentOf(s.getOffset(), s.getData()));
        }
        return new Chunk(m.getIndex(), segments, m.getHash().toByteArray());
    }

    private static Segment segmentOf(long offset, ByteString data) {
        Slice slice = new Slice();
        try {
            UnsafeByteOperations.unsafeWriteTo(data, slice);
        } catch (IOException e) {
            throw new IllegalStateException(e); // Slice throws none
        }
        return slice.array != null && slice.length == data.size() ? new Segment(offset, slice.array, slice.from, slice.length)
                : new Segment(offset, data.toByteArray());
    }

    /** The array a ByteString is a slice of, when it hands over one slice (writeLazy of an array); else nothing. */
    private static final class Slice extends ByteOutput {
        byte[] array;
        int from;
        int length;
        private int calls;

        @Override
        public void writeLazy(byte[] value, int offset, int length) {
            if (calls++ == 0) {
                this.array = value;
                this.from = offset;
                this.length = length;
            } else {
                this.array = null;
            }
        }

        @Override
        public void write(byte[] value, int offset, int length) {
            calls++;
            array = null;
        }

        @Override
        public void write(byte value) {
            calls++;
            array = null;
        }

        @Override
        public void write(ByteBuffer value) {
            calls++;
            array = null;
        }

        @Override
        public void writeLazy(ByteBuffer value) {
            calls++;
            array = null;
        }
    }

    /**
     * Parses the chunks the destination receives with one copy of their bytes instead of three.
     * grpc-java's own protobuf marshaller (grpc-java 1.69.1 protobuf-lite ProtoLiteUtils
     * MessageMarshaller.parse) copies a message of a known length out of the received (direct)
     * buffers into a reused thread-local array and parses it without aliasing, so every
     * {@code bytes} field is copied again into a ByteString of its own, which Chunk needed copied a
     * third time into an array. This one copies the message once into an array of its own and
     * parses it with aliasing: a segment's ByteString is a slice of that array ({@link #fromWire}
     * takes the slice as it is). The stream gRPC hands a marshaller is a KnownLength (grpc-java
     * 1.69.1 core MessageDeframer.getUncompressedBody, ReadableBuffers.openStream); any other
     * stream goes to the generated marshaller. Sending is the generated marshaller's. Each message
     * gets an array of its own: this one allocates it.
     */
    static final MethodDescriptor.Marshaller<ChunkMessage> CHUNKS = chunks(null);

    /**
     * {@link #CHUNKS}, the array of each message taken from {@code arrays} (one transfer's; see
     * {@link ChunkArrays} for when an array goes back), or made when {@code arrays} is null.
     */
    static MethodDescriptor.Marshaller<ChunkMessage> chunks(ChunkArrays arrays) {
        return new MethodDescriptor.Marshaller<>() {
            private final MethodDescriptor.Marshaller<ChunkMessage> generated = ProtoUtils.marshaller(ChunkMessage.getDefaultInstance());

            @Override
            public InputStream stream(ChunkMessage value) {
                return generated.stream(value);
            }

            @Override
            public ChunkMessage parse(InputStream in) {
                if (!(in instanceof KnownLength)) {
                    return generated.parse(in);
                }
                try {
                    int size = in.available();
                    byte[] buf = arrays == null ? new byte[size] : arrays.take(size);
                    int n = 0;
                    while (n < size) {
                        int r = in.read(buf, n, size - n);
                        if (r < 0) {
                            break;
                        }
                        n += r;
                    }
                    if (n != size || in.read() != -1) {
                        throw Status.INTERNAL.withDescription("a chunk message of " + size + " bytes ended at " + n).asRuntimeException();
                    }
                    // the array as an immutable ByteString: only a CodedInputStream over one aliases (protobuf's
                    // CodedInputStream.newInstance(byte[]) does not, the array being the caller's to change)
                    CodedInputStream cis = UnsafeByteOperations.unsafeWrap(buf, 0, size).newCodedInput();
                    cis.enableAliasing(true);
                    cis.setSizeLimit(Integer.MAX_VALUE); // gRPC's maxInboundMessageSize bounds the message (as ProtoLiteUtils does)
                    return ChunkMessage.parseFrom(cis);
                } catch (IOException e) {
                    throw Status.INTERNAL.withDescription("invalid chunk message").withCause(e).asRuntimeException();
                }
            }
        };
    }
}
