package io.loopcsi.transfer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The data ranges of an image of a given size: sorted, non-overlapping, non-empty, inside the size.
 * Every list that comes from a peer goes through {@link #of}, so a range beyond the size or two
 * that overlap are refused with the offending ranges named, before anything is read or written.
 * Adjacent ranges are joined (fewer, longer reads; the same bytes).
 */
public final class RangeList {

    private final long size;
    private final List<Range> ranges;

    private RangeList(long size, List<Range> ranges) {
        this.size = size;
        this.ranges = Collections.unmodifiableList(ranges);
    }

    /** The ranges, checked against the size; INVALID names the first range that breaks a rule. */
    public static RangeList of(long size, List<Range> given) {
        if (size < 0) {
            throw TransferException.invalid("size " + size + " is negative");
        }
        List<Range> joined = new ArrayList<>();
        Range previous = null;
        for (Range r : given) {
            if (r.offset() < 0 || r.length() <= 0) {
                throw TransferException.invalid("range " + r + " (offset " + r.offset() + ", length " + r.length()
                        + "): the offset must be >= 0 and the length > 0");
            }
            if (r.end() > size || r.end() < 0) {
                throw TransferException.invalid("range " + r + " ends beyond the image's size " + size);
            }
            if (previous != null && r.offset() < previous.end()) {
                throw TransferException.invalid("range " + r + " overlaps or precedes " + previous
                        + ": ranges must be sorted and must not overlap");
            }
            Range last = joined.isEmpty() ? null : joined.get(joined.size() - 1);
            if (last != null && last.end() == r.offset()) {
                joined.set(joined.size() - 1, new Range(last.offset(), last.length() + r.length()));
            } else {
                joined.add(r);
            }
            previous = r;
        }
        return new RangeList(size, joined);
    }

    public long size() {
        return size;
    }

    public List<Range> ranges() {
        return ranges;
    }

    /** The bytes the ranges cover: what travels. */
    public long bytes() {
        long sum = 0;
        for (Range r : ranges) {
            sum += r.length();
        }
        return sum;
    }

    /** The parts of the ranges inside [from, to), in order. */
    public List<Range> within(long from, long to) {
        List<Range> out = new ArrayList<>();
        int i = firstEndingAfter(from);
        for (; i < ranges.size() && ranges.get(i).offset() < to; i++) {
            Range r = ranges.get(i);
            long a = Math.max(r.offset(), from);
            long b = Math.min(r.end(), to);
            if (b > a) {
                out.add(new Range(a, b - a));
            }
        }
        return out;
    }

    /** Whether [from, to) lies inside one range. */
    public boolean covers(long from, long to) {
        int i = firstEndingAfter(from);
        return i < ranges.size() && ranges.get(i).contains(from, to);
    }

    private int firstEndingAfter(long offset) {
        int lo = 0;
        int hi = ranges.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ranges.get(mid).end() <= offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RangeList l && l.size == size && l.ranges.equals(ranges);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(size) * 31 + ranges.hashCode();
    }

    @Override
    public String toString() {
        return ranges + " of " + size;
    }
}
