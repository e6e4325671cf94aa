package io.loopcsi.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;

import io.loopcsi.engine.Ids;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.DigestFormat;
import io.loopcsi.transfer.ImageSource;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.TransferPlan;
import io.loopcsi.transfer.service.SourceImages;
import io.loopcsi.transfer.service.TransferClient;
import io.loopcsi.transfer.service.TransferServer;
import io.loopcsi.transfer.service.TransferService;
import io.loopcsi.transfer.tls.NodeKeys;

/**
 * Benchmark "transfer" (issue 35): the node-to-node transfer against {@code cp --sparse=always} of the
 * same image on the same machine. A sparse image of {@code BENCH_TRANSFER_MIB} (1024), half of it
 * written in scattered extents (64 KiB to 4 MiB of random data, each followed by a hole of its size),
 * lies in pool x on a loop-mounted xfs in BENCH_TMP. The transfer is the production code in this
 * process: node x's TransferServer and TransferService, node y's TransferClient fetching into pool y
 * on the same xfs, over TLS with pinned keys, with the plan's digest, every chunk's hash checked at the
 * destination and the digest composed there compared with the plan's (all inside the time). The grant and the caller's identity
 * are the in-process wiring of TransferServiceTest (a map of grants, the client's certificate
 * fingerprint naming node y): the Kubernetes objects behind them are not on this path.
 *
 * <p>The baseline is {@code cp --sparse=always} of the same file to the same xfs, then an fsync of
 * the copy: the transfer syncs what it writes (its checkpoints and its end), so cp must too. Both
 * read the source from the page cache (written just before, warmed by the first round of each).
 * The first transfer of the JVM is reported apart (the JIT compiles the path meanwhile: what a
 * node's first transfer costs); untimed transfers follow until one ran with the JIT compiling
 * less than a tenth of its time (at most {@code BENCH_TRANSFER_WARM}, 8), then
 * {@code BENCH_TRANSFER_ROUNDS} (5) timed rounds, alternating which goes first; rows give medians:
 * the steady state of a long-lived node process.
 * Bytes sent are counted twice: the data bytes the client received, and the bytes the server's TCP
 * socket had acknowledged at the end (from {@code ss -ti}: TLS records, HTTP/2 and protobuf framing,
 * the plan, the hashes), each over the source's allocated bytes ({@code stat %b}).
 */
final class TransferBench {

    static final String B = "10 transfer";
    /** CPU time of this process (both ends of the transfer and the harness, which idles meanwhile). */
    static final com.sun.management.OperatingSystemMXBean CPU = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
            .getOperatingSystemMXBean();
    /** Time the JIT compilers spent (in this process's CPU time above, not the transfer's own work). */
    static final java.lang.management.CompilationMXBean JIT = java.lang.management.ManagementFactory.getCompilationMXBean();
    static final String SRC = Ids.volumeIdFor("bench-source");
    static final String DST = Ids.volumeIdFor("bench-destination");

    final Bench bench;
    private final long imageBytes = Long.parseLong(Bench.env("BENCH_TRANSFER_MIB", "1024")) * Bench.MIB;
    final int rounds = Integer.parseInt(Bench.env("BENCH_TRANSFER_ROUNDS", "5"));
    /** Untimed transfers at most after the first, until the JIT is done (BENCH_TRANSFER_WARM). */
    final int warmMax = Integer.parseInt(Bench.env("BENCH_TRANSFER_WARM", "8"));
    private final AllocatedRanges ranges = new AllocatedRanges(Bench.SHELL);
    private final Map<String, TransferGrant> grants = new ConcurrentHashMap<>();
    private TransferService service;
    private long copyAllocated;

    TransferBench(Bench bench) {
        this.bench = bench;
    }

    void run(Path dir) throws Exception {
        long t0 = System.nanoTime();
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).strip();
        Path img = dir.resolve("xfs.img");
        Path xfs = Files.createDirectory(dir.resolve("xfs"));
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(3 * imageBytes + 512 * Bench.MIB); // the source, two copies, the log
        }
        Bench.SHELL.run("mkfs.xfs", "-q", img.toString());
        Bench.SHELL.run("mount", "-o", "loop", img.toString(), xfs.toString());
        PoolDirectory x = new PoolDirectory(Files.createDirectory(xfs.resolve("x")));
        PoolDirectory y = new PoolDirectory(Files.createDirectory(xfs.resolve("y")));
        try {
            Path src = x.volumeImage(SRC);
            long written = writeScattered(src);
            long allocated = allocated(src);
            NodeKeys xKeys = NodeKeys.generate("x");
            NodeKeys yKeys = NodeKeys.generate("y");
            service = new TransferService("x", new SourceImages(x), id -> Optional.ofNullable(grants.get(id)), caller -> {
                if (!caller.certificateFingerprint().equals(yKeys.fingerprint())) {
                    throw new TransferException(TransferException.Kind.DENIED, "unknown certificate");
                }
                return "y";
            }, ranges, Clock.systemUTC());
            double cpRate;
            try (TransferServer server = TransferServer.start("127.0.0.1", 0, xKeys, () -> Set.of(yKeys.fingerprint()), service)) {
                Source local = new Source(server.port(), xKeys.fingerprint(), null, null);
                Path copy = y.root().resolve("cp-copy.img");
                // the first transfer of this JVM, reported apart: what a node's first transfer after its start costs (JIT compiling)
                Sent first = transfer(src, local, yKeys, y, "first", allocated);
                cp(src, copy);
                double cipherMsPerMib = CipherCost.msPerMib(256);
                // then transfers until the JIT is done with this path (it compiled for less than a tenth of the
                // transfer's time), so that the timed rounds measure the steady state a long-lived node runs in
                int warm = 0;
                Sent w = first;
                while (w.jitSeconds > 0.1 * w.seconds && warm < warmMax) {
                    w = transfer(src, local, yKeys, y, "warm" + warm, allocated);
                    warm++;
                }
                double[] xfer = new double[rounds];
                double[] cpSecs = new double[rounds];
                double[] cpCpu = new double[rounds];
                double[] ratio = new double[rounds];
                double[] cpu = new double[rounds];
                double[] jit = new double[rounds];
                double[] toPlan = new double[rounds];
                double[] toFirst = new double[rounds];
                double[] streaming = new double[rounds];
                double[] tail = new double[rounds];
                Sent sent = null;
                for (int i = 0; i < rounds; i++) {
                    Copied copied;
                    if (i % 2 == 0) {
                        sent = transfer(src, local, yKeys, y, "r" + i, allocated);
                        copied = cp(src, copy);
                    } else {
                        copied = cp(src, copy);
                        sent = transfer(src, local, yKeys, y, "r" + i, allocated);
                    }
                    cpSecs[i] = copied.seconds();
                    cpCpu[i] = copied.cpuSeconds();
                    xfer[i] = sent.seconds;
                    cpu[i] = sent.cpuSeconds;
                    jit[i] = sent.jitSeconds;
                    toPlan[i] = sent.phases.planned;
                    toFirst[i] = sent.phases.firstChunk - sent.phases.planned;
                    streaming[i] = sent.phases.lastChunk - sent.phases.firstChunk;
                    tail[i] = sent.seconds - sent.phases.lastChunk;
                    ratio[i] = cpSecs[i] / xfer[i];
                }
                double mib = allocated / (double) Bench.MIB;
                String n = " (median of " + rounds + ")";
                bench.row(B, String.format("source: %d MiB sparse image, %d MiB written in scattered extents, %.0f MiB allocated",
                        imageBytes / Bench.MIB, written / Bench.MIB, mib), "", "");
                bench.row(B, "first transfer of the JVM (cold: JIT compiling meanwhile), not in the rows below", String.format(
                        "%.0f MiB/s; CPU %.1f s, wall %.1f s, JIT %.1f s", mib / first.seconds, first.cpuSeconds, first.seconds,
                        first.jitSeconds), "");
                bench.row(B, String.format("untimed transfers after it until the JIT compiled < 10%% of one (at most %d); JIT in the last", warmMax),
                        String.format("%d; %.2f s", warm, w.jitSeconds), "");
                bench.row(B, "transfer x->y, steady state (TLS, chunk hashes, digest checked at both ends)" + n, mib / Bench.median(xfer), "MiB/s");
                bench.row(B, "  CPU time of both ends per transfer / its wall time" + n, String.format("%.1f / %.1f", Bench.median(cpu),
                        Bench.median(xfer)), "s");
                bench.row(B, "  its wall time: to the plan (the source's plan pass) / to the first chunk written / first to last chunk written"
                        + " / after the last (the destination's sync and digest)" + n, String.format("%.3f / %.3f / %.3f / %.3f",
                                Bench.median(toPlan), Bench.median(toFirst), Bench.median(streaming), Bench.median(tail)), "s");
                bench.row(B, "  JIT compilations meanwhile, elapsed (CompilationMXBean; on other threads: the JVM still warming, not the transfer's work)" + n,
                        String.format("%.1f", Bench.median(jit)), "s");
                long d0 = System.nanoTime();
                ImageSource.digest(src, ranges.of(src), TransferPlan.DEFAULT_CHUNK, DigestFormat.OFFERED.get(0));
                bench.row(B, "  the plan's content digest pass over the source alone (ImageSource.digest; its chunks hashed on up to 4 threads since"
                        + " branch speed, " + Runtime.getRuntime().availableProcessors() + " processors here; a transfer hashes twice: this pass, the chunks received)",
                        mib / ((System.nanoTime() - d0) / 1e9), "MiB/s");
                bench.row(B, "cp --sparse=always --reflink=never + fsync of the copy, same xfs" + n, mib / Bench.median(cpSecs), "MiB/s");
                bench.row(B, "ratio transfer / cp (median of per-round ratios; goal >= 0.8)", Bench.median(ratio), "x");
                // the rate is bounded by the CPU a MiB costs: both ends share this machine's processors
                int cpus = Runtime.getRuntime().availableProcessors();
                double[] work = new double[rounds];
                for (int i = 0; i < rounds; i++) {
                    work[i] = Math.max(0, cpu[i] - jit[i]);
                }
                double xferMs = 1000 * Bench.median(cpu) / mib;
                double workMs = 1000 * Bench.median(work) / mib;
                double cpMs = 1000 * Bench.median(cpCpu) / mib;
                cpRate = mib / Bench.median(cpSecs);
                bench.row(B, "  CPU per MiB allocated: transfer (both ends; without the JIT's) / cp (user + sys) / AES-128-GCM alone, encrypt"
                        + " + decrypt (CipherCost: TLS 1.3's cipher here, 16 KiB records, one thread)" + n, String.format("%.2f (%.2f) / %.2f / %.2f",
                                xferMs, workMs, cpMs, cipherMsPerMib), "ms");
                bench.row(B, "  the transfer's ceiling with all " + cpus + " processors busy on it (" + cpus
                        + " x 1000 / its CPU ms per MiB without the JIT's), and over cp's rate", String.format("%.0f; %.2f", cpus * 1000 / workMs,
                                cpus * 1000 / workMs / cpRate), "MiB/s; x");
                bench.row(B, "data bytes sent / source's allocated bytes (goal <= 1.05)", String.format("%.4f", sent.dataBytes / (double) allocated), "x");
                bench.row(B, "bytes on the wire (server's TCP, ss bytes_acked) / allocated bytes", String.format("%.4f", sent.wireBytes / (double) allocated), "x");
                bench.row(B, "destination's allocated bytes / source's (transfer / cp)", String.format("%.3f / %.3f",
                        sent.destinationAllocated / (double) allocated, copyAllocated / (double) allocated), "x");
            }
            x.lock().close(); // pool x is the source process's now
            new TwoProcesses(this, x.root(), src, yKeys, y, allocated).run(cpRate);
            bench.row(B, "load average before / after; whole benchmark", loadBefore + " / " + Files.readString(Path.of("/proc/loadavg"))
                    .strip() + "; " + Math.round((System.nanoTime() - t0) / 1e9) + " s", "");
        } finally {
            x.lock().close();
            y.lock().close();
        }
    }

    /** cpuSeconds: this process's; sourceCpuSeconds and sourceJitSeconds: the source's process's and its JIT compilers' when it is another one (else 0). */
    record Sent(double seconds, double cpuSeconds, double sourceCpuSeconds, double sourceJitSeconds, double jitSeconds, long dataBytes, long wireBytes, long destinationAllocated, Phases phases) {
    }

    /**
     * Where a transfer's wall time went, in seconds from the fetch's start: the plan answered (the
     * source's plan pass; the destination's image opened), the first and the last chunk written; the
     * rest, to the end, is the destination's sync and its digest of what it wrote.
     */
    static final class Phases implements TransferClient.Progress {
        private final long start = System.nanoTime();
        volatile double planned;
        volatile double firstChunk = -1;
        volatile double lastChunk;

        @Override
        public void planned(TransferPlan plan, long fromChunk) {
            planned = since();
        }

        @Override
        public void chunk(long index, long bytes) {
            double t = since();
            if (firstChunk < 0) {
                firstChunk = t;
            }
            lastChunk = t;
        }

        private double since() {
            return (System.nanoTime() - start) / 1e9;
        }
    }

    /**
     * Node x's transfer server as node y reaches it: its port, its certificate's fingerprint, and, when
     * it is another process, the CPU nanoseconds of that process so far and of its JIT compilers so
     * far (else null: it is this one's).
     */
    record Source(int port, String fingerprint, java.util.function.LongSupplier otherProcessCpu, java.util.function.LongSupplier otherProcessJit) {
    }

    /** One transfer of the source into a new volume of pool y, as node y fetches it: timed from the plan to the checked digest. */
    Sent transfer(Path src, Source server, NodeKeys yKeys, PoolDirectory y, String tag, long allocated) throws IOException {
        String id = "bench." + tag;
        Instant now = Instant.now();
        grants.put(id, new TransferGrant(id, SRC, "x", "y", now.minusSeconds(60), now.plus(Duration.ofHours(1))));
        Path dst = y.volumeImage(DST);
        try (TransferClient client = new TransferClient("127.0.0.1", server.port(), server.fingerprint(), yKeys, null)) {
            long other0 = server.otherProcessCpu() == null ? 0 : server.otherProcessCpu().getAsLong();
            long otherJit0 = server.otherProcessJit() == null ? 0 : server.otherProcessJit().getAsLong();
            long cpu0 = CPU.getProcessCpuTime();
            long jit0 = JIT.getTotalCompilationTime();
            long s = System.nanoTime();
            Phases phases = new Phases();
            TransferClient.Result r = client.fetch(id, SRC, 0, y.root(), dst, imageBytes, ranges::of, phases);
            double secs = (System.nanoTime() - s) / 1e9;
            double cpuSecs = (CPU.getProcessCpuTime() - cpu0) / 1e9;
            double jitSecs = (JIT.getTotalCompilationTime() - jit0) / 1e3;
            double otherCpuSecs = server.otherProcessCpu() == null ? 0 : (server.otherProcessCpu().getAsLong() - other0) / 1e9;
            double otherJitSecs = server.otherProcessJit() == null ? 0 : (server.otherProcessJit().getAsLong() - otherJit0) / 1e9;
            long wire = wireBytes(server.port());
            long dstAllocated = allocated(dst);
            if (r.fromChunk() != 0) {
                throw new AssertionError(tag + ": the transfer resumed at chunk " + r.fromChunk() + " instead of starting anew");
            }
            if (r.bytesReceived() > allocated * AllocatedRanges.BUDGET) {
                throw new AssertionError(tag + ": " + r.bytesReceived() + " bytes sent for " + allocated + " allocated");
            }
            if (Files.mismatch(src, dst) != -1) {
                throw new AssertionError(tag + ": the transferred image differs from the source");
            }
            return new Sent(secs, cpuSecs, otherCpuSecs, otherJitSecs, jitSecs, r.bytesReceived(), wire, dstAllocated, phases);
        } finally {
            grants.remove(id);
            service.forget(id);
            Files.deleteIfExists(dst);
        }
    }

    /** What one cp took: wall seconds (cp and the fsync of the copy) and cp's CPU seconds (user + sys, as bash's times reports its child). */
    record Copied(double seconds, double cpuSeconds) {
    }

    /**
     * cp --sparse=always of the source, then an fsync of the copy; the seconds both took. The copy's
     * allocated bytes are kept in {@link #copyAllocated}, and the copy deleted. --reflink=never: since
     * coreutils 9.0 cp defaults to --reflink=auto, and on xfs (reflink on by default in mkfs.xfs)
     * that shares the source's extents instead of copying the data, which a transfer to another node
     * cannot do. cp runs under bash, whose {@code times} gives cp's CPU time (bash's own start, a
     * millisecond or two, is in the wall time).
     */
    private Copied cp(Path src, Path copy) throws IOException {
        long s = System.nanoTime();
        String times = Bench.SHELL.run("bash", "-c", "cp --sparse=always --reflink=never \"$1\" \"$2\" && times", "cp", src.toString(),
                copy.toString());
        try (FileChannel c = FileChannel.open(copy, StandardOpenOption.WRITE)) {
            c.force(true);
        }
        double secs = (System.nanoTime() - s) / 1e9;
        copyAllocated = allocated(copy);
        if (copyAllocated == 0) {
            throw new AssertionError("cp made an empty copy");
        }
        Files.delete(copy);
        return new Copied(secs, childCpuSeconds(times));
    }

    /** The children's user + sys seconds from bash's {@code times} (its second line: "0m0.012s 0m0.250s"). */
    static double childCpuSeconds(String times) {
        String[] lines = times.strip().split("\n");
        double total = 0;
        for (String t : lines[lines.length - 1].trim().split("\\s+")) {
            int m = t.indexOf('m');
            total += Integer.parseInt(t.substring(0, m)) * 60 + Double.parseDouble(t.substring(m + 1, t.length() - 1));
        }
        return total;
    }

    /**
     * The image: pieces of random data cycling through 64 KiB, 1 MiB, 256 KiB, 4 MiB, 192 KiB and
     * 2 MiB, each followed by a hole of its own size, so that half of it is written; synced.
     * Returns the bytes written.
     */
    private long writeScattered(Path image) throws IOException {
        long[] sizes = { 64 << 10, 1 << 20, 256 << 10, 4 << 20, 192 << 10, 2 << 20 };
        SplittableRandom rnd = new SplittableRandom(35);
        ByteBuffer buf = ByteBuffer.allocateDirect(4 << 20);
        long written = 0;
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(imageBytes);
        }
        try (FileChannel c = FileChannel.open(image, StandardOpenOption.WRITE)) {
            long at = 0;
            for (int i = 0; at < imageBytes; i++) {
                long len = Math.min(sizes[i % sizes.length], imageBytes - at);
                buf.clear();
                while (buf.position() < len) {
                    buf.putLong(rnd.nextLong());
                }
                buf.flip().limit((int) len);
                while (buf.hasRemaining()) {
                    c.write(buf, at + buf.position());
                }
                written += len;
                at += 2 * len;
            }
            c.force(true);
        }
        return written;
    }

    /** Bytes the server's end of the (one) connection on this port has had acknowledged: what it sent. */
    private static long wireBytes(int port) {
        String out = Bench.SHELL.run("ss", "-tinH", "state", "established", "sport", "=", ":" + port);
        long total = 0;
        for (String tok : out.split("\\s+")) {
            if (tok.startsWith("bytes_acked:")) {
                total += Long.parseLong(tok.substring("bytes_acked:".length()));
            }
        }
        if (total == 0) {
            throw new AssertionError("ss shows no established connection from port " + port + ":\n" + out);
        }
        return total;
    }

    static long allocated(Path f) {
        String[] s = Bench.SHELL.run("stat", "-c", "%b %B", f.toString()).trim().split("\\s+");
        return Long.parseLong(s[0]) * Long.parseLong(s[1]);
    }
}
