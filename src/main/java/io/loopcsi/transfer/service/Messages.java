package io.loopcsi.transfer.service;

import java.util.ArrayList;
import java.util.List;

import com.google.protobuf.UnsafeByteOperations;

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
     * safe because a {@link Chunk}'s arrays are read from the image for this message alone and
     * never written after.
     */
    static ChunkMessage toWire(Chunk c) {
        ChunkMessage.Builder b = ChunkMessage.newBuilder().setIndex(c.index()).setHash(UnsafeByteOperations.unsafeWrap(c.hash()));
        for (Segment s : c.segments()) {
            b.addSegments(io.loopcsi.transfer.v1.Segment.newBuilder().setOffset(s.offset()).setData(UnsafeByteOperations.unsafeWrap(s.data())));
        }
        return b.build();
    }

    static Chunk fromWire(ChunkMessage m) {
        List<Segment> segments = new ArrayList<>(m.getSegmentsCount());
        for (io.loopcsi.transfer.v1.Segment s : m.getSegmentsList()) {
            segments.add(new Segment(s.getOffset(), s.getData().toByteArray()));
        }
        return new Chunk(m.getIndex(), segments, m.getHash().toByteArray());
    }
}
