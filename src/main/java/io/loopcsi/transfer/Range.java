package io.loopcsi.transfer;

/** Bytes [offset, offset + length) of an image. */
public record Range(long offset, long length) {

    public long end() {
        return offset + length;
    }

    boolean contains(long from, long to) {
        return from >= offset && to <= end();
    }

    @Override
    public String toString() {
        return "[" + offset + ", " + end() + ")";
    }
}
