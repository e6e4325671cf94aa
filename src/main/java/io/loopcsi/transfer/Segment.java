package io.loopcsi.transfer;

/** Bytes of an image at an offset: the data of one range (or the part of it inside one chunk). */
public record Segment(long offset, byte[] data) {

    public long end() {
        return offset + data.length;
    }
}
