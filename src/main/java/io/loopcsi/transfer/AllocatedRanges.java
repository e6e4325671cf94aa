package io.loopcsi.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import io.loopcsi.engine.CommandRunner;

/**
 * Where an image's data is: the ranges a transfer sends, so that bytes sent stay within
 * {@link #BUDGET} of the bytes the image has allocated.
 *
 * <p>Java has no lseek(SEEK_DATA/SEEK_HOLE), so the ranges come from {@code xfs_io -r -c
 * "seek -a -r 0"}, which walks the file with exactly those calls and prints each DATA and HOLE
 * offset. xfs_io is already a host requirement of every role (HostRequirements), it works on any
 * host filesystem (the name notwithstanding: xfs, ext4, btrfs), one run covers the whole file, and
 * it costs nothing per hole: a 1 TiB thin image with 1 GiB written is a few lines of output.
 * Reading the whole file and skipping zero blocks would cost a pass over the logical size (the
 * holes read as zeros, through the CPU), which is why it is only the fallback below. Unwritten
 * (fallocated, never written) extents are holes to SEEK_DATA on xfs and ext4, so a thick source
 * sends only what was written.
 *
 * <p>A filesystem without SEEK_DATA support answers "all data" (the kernel's generic fallback);
 * when the ranges exceed the budget of the allocated bytes ({@code stat %b}), they are refined by
 * reading them and dropping the all-zero blocks, which brings bytes sent back under the allocated
 * bytes (a zero block sent or not gives the same content: holes read as zeros).
 */
public final class AllocatedRanges {

    /** Bytes sent may be this much more than the bytes allocated (issue 35: <= 1.05x). */
    public static final double BUDGET = 1.05;
    /** The granularity of the zero-block refinement: the host filesystems' block size. */
    static final int BLOCK = 4096;

    private final CommandRunner runner;

    public AllocatedRanges(CommandRunner runner) {
        this.runner = runner;
    }

    /** The data ranges of the image at its current size, within the budget of its allocated bytes. */
    public RangeList of(Path image) {
        String[] stat = runner.run("stat", "-c", "%s %b %B", image.toString()).trim().split("\\s+");
        long size = Long.parseLong(stat[0]);
        long allocated = Long.parseLong(stat[1]) * Long.parseLong(stat[2]);
        RangeList seek = parseSeek(runner.run("xfs_io", "-r", "-c", "seek -a -r 0", image.toString()), size);
        if (withinBudget(seek.bytes(), allocated)) {
            return seek;
        }
        return withoutZeroBlocks(image, seek);
    }

    static boolean withinBudget(long sent, long allocated) {
        return sent <= allocated * BUDGET + BLOCK;
    }

    /**
     * The ranges from xfs_io's {@code seek -a -r 0} output: a header line, then "DATA off" and
     * "HOLE off" in file order, where DATA starts a range and the next HOLE (or the size) ends it;
     * "EOF" for an offset means none (an empty file prints "DATA EOF").
     */
    static RangeList parseSeek(String output, long size) {
        List<Range> ranges = new ArrayList<>();
        long dataAt = -1;
        for (String line : output.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length != 2 || !(f[0].equals("DATA") || f[0].equals("HOLE"))) {
                continue; // the header "Whence Result"
            }
            long at;
            if (f[1].equals("EOF")) {
                at = size;
            } else {
                try {
                    at = Long.parseLong(f[1]);
                } catch (NumberFormatException e) {
                    throw TransferException.state("xfs_io seek printed an offset that is not a number: " + line, e);
                }
            }
            at = Math.min(at, size);
            if (f[0].equals("DATA")) {
                dataAt = at;
            } else if (dataAt >= 0) {
                if (at > dataAt) {
                    ranges.add(new Range(dataAt, at - dataAt));
                }
                dataAt = -1;
            }
        }
        if (dataAt >= 0 && dataAt < size) {
            ranges.add(new Range(dataAt, size - dataAt));
        }
        return RangeList.of(size, ranges);
    }

    /** The ranges less their all-zero {@link #BLOCK}-aligned blocks (reads every byte of the ranges). */
    static RangeList withoutZeroBlocks(Path image, RangeList ranges) {
        List<Range> out = new ArrayList<>();
        ByteBuffer buf = ByteBuffer.allocate(BLOCK * 256);
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ)) {
            long runStart = -1;
            for (Range r : ranges.ranges()) {
                long pos = r.offset();
                while (pos < r.end()) {
                    long blockEnd = Math.min(r.end(), (pos / BLOCK + 1) * BLOCK);
                    int want = (int) Math.min(buf.capacity(), r.end() - pos);
                    buf.clear().limit(want);
                    readFully(ch, buf, pos);
                    buf.flip();
                    // walk the buffer block by block (the first and last may be partial)
                    long at = pos;
                    while (buf.hasRemaining()) {
                        int len = (int) Math.min(buf.remaining(), Math.max(1, blockEnd - at));
                        boolean zero = true;
                        for (int i = 0; i < len; i++) {
                            if (buf.get() != 0) {
                                zero = false;
                                buf.position(buf.position() + (len - i - 1));
                                break;
                            }
                        }
                        if (!zero && runStart < 0) {
                            runStart = at;
                        } else if (zero && runStart >= 0) {
                            out.add(new Range(runStart, at - runStart));
                            runStart = -1;
                        }
                        at += len;
                        blockEnd = at + BLOCK;
                    }
                    pos += want;
                }
                if (runStart >= 0) {
                    out.add(new Range(runStart, r.end() - runStart));
                    runStart = -1;
                }
            }
        } catch (IOException e) {
            throw TransferException.state("cannot read " + image + ": " + e.getMessage(), e);
        }
        return RangeList.of(ranges.size(), out);
    }

    static void readFully(FileChannel ch, ByteBuffer buf, long position) throws IOException {
        long at = position;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, at);
            if (n < 0) {
                throw new IOException("unexpected end of file at " + at + " (the image shrank while it was read?)");
            }
            at += n;
        }
    }
}
