package io.loopcsi.transfer;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Bytes of an image at an offset: the data of one range (or the part of it inside one chunk),
 * {@code length} bytes of {@code array} from {@code from}. A slice of a larger array is what the
 * destination receives (the segment's bytes where gRPC's message put them, not copied out:
 * service.Messages.fromWire); the source's Pump reads every chunk into one array it reuses, once
 * gRPC has serialised the chunk read before (TransferService.Pump). Not written while in use.
 */
public record Segment(long offset, byte[] array, int from, int length) {

    public Segment {
        if (from < 0 || length < 0 || from > array.length - length) {
            throw new IllegalArgumentException("segment [" + from + ", +" + length + ") outside an array of " + array.length);
        }
    }

    /** The whole of {@code data}. */
    public Segment(long offset, byte[] data) {
        this(offset, data, 0, data.length);
    }

    public long end() {
        return offset + length;
    }

    /** The bytes, as a buffer of their own (position 0, limit {@code length}) over the same array: no copy. */
    public ByteBuffer buffer() {
        return ByteBuffer.wrap(array, from, length).slice();
    }

    /** The bytes as an array: {@link #array} when the segment is all of it, else a copy (prefer {@link #buffer}). */
    public byte[] data() {
        return from == 0 && length == array.length ? array : Arrays.copyOfRange(array, from, from + length);
    }
}
