package io.loopcsi.transfer.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.Chunk;
import io.loopcsi.transfer.DigestFormat;
import io.loopcsi.transfer.ImageSource;
import io.loopcsi.transfer.RangeList;
import io.loopcsi.transfer.Segment;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.TransferPlan;
import io.loopcsi.transfer.tls.NodeKeys;
import io.loopcsi.transfer.v1.ChunkMessage;
import io.loopcsi.transfer.v1.ChunksRequest;
import io.loopcsi.transfer.v1.PlanReply;
import io.loopcsi.transfer.v1.PlanRequest;
import io.loopcsi.transfer.v1.TransferGrpc;
import io.loopcsi.testing.KernelCleanup;

/**
 * The transfer service between two node instances on this machine: node x serves a volume of its
 * pool, node y fetches it into its own pool, each with its own data dir, over TLS with pinned
 * self-signed certificates, on a real xfs (loop-mounted, released even when a test fails). What a
 * user would notice: the volume arrives whole and as sparse as it was; a peer with another key is
 * refused; a transfer cut in the middle goes on where it stopped; a peer sending other data or
 * other ranges than planned gets nothing written; an unauthorised or unknown transfer is refused.
 */
class TransferServiceTest {

    static final int KIB = 1024;
    static final int MIB = 1024 * 1024;
    static final long SIZE = 64L * MIB;
    static final String SRC = Ids.volumeIdFor("source");
    static final String DST = Ids.volumeIdFor("destination");
    static final String T = "pool-a.t1";
    static final CommandRunner RUN = new CommandRunner(Duration.ofSeconds(60));
    static final AllocatedRanges RANGES = new AllocatedRanges(RUN);
    static final Function<Path, RangeList> OWN_RANGES = RANGES::of;

    static Path classDir;
    static Path xfs;

    Path dir;
    PoolDirectory x;
    PoolDirectory y;
    NodeKeys xKeys;
    NodeKeys yKeys;
    final Map<String, TransferGrant> grants = new HashMap<>();
    final Map<String, String> nodeByFingerprint = new HashMap<>();
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void mountXfs() throws Exception {
        classDir = Files.createTempDirectory(Path.of("/tmp"), "loopcsi-xfer-");
        Path img = classDir.resolve("xfs.img");
        xfs = Files.createDirectory(classDir.resolve("xfs"));
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(400L * MIB);
        }
        RUN.run("mkfs.xfs", "-q", img.toString());
        RUN.run("mount", "-o", "loop", img.toString(), xfs.toString());
    }

    @AfterAll
    static void release() {
        KernelCleanup.releaseAndDelete(classDir);
    }

    @BeforeEach
    void nodes() throws IOException {
        dir = Files.createTempDirectory(xfs, "t");
        x = new PoolDirectory(Files.createDirectory(dir.resolve("x")));
        y = new PoolDirectory(Files.createDirectory(dir.resolve("y")));
        xKeys = NodeKeys.generate("x");
        yKeys = NodeKeys.generate("y");
        nodeByFingerprint.put(yKeys.fingerprint(), "y");
        Instant now = Instant.now();
        grants.put(T, new TransferGrant(T, SRC, "x", "y", now.minusSeconds(60), now.plus(Duration.ofHours(1))));
        Path src = sparse(x.volumeImage(SRC), SIZE);
        write(src, 0, random(4 * MIB, 1));
        write(src, 10L * MIB, random(8 * MIB, 2));
        write(src, 30L * MIB + 12 * KIB, random(64 * KIB, 3));
        write(src, 40L * MIB, random(12 * MIB, 4));
    }

    @AfterEach
    void stop() {
        for (AutoCloseable c : open) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the next one still closes
            }
        }
        x.lock().close();
        y.lock().close();
        KernelCleanup.deleteTree(dir);
    }

    // ---- a transfer --------------------------------------------------------------------------

    @Test
    void aSparseVolumeArrivesWholeWithOnlyItsDataSentAndAsSparseAsItWas() throws Exception {
        TransferServer server = serve(xKeys, service());
        TransferClient.Result r = client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES,
                null);

        Path src = x.volumeImage(SRC);
        Path dst = y.volumeImage(DST);
        assertEquals(-1, Files.mismatch(src, dst), "the destination's content is the source's");
        assertEquals(ImageSource.digest(src, RANGES.of(src), TransferPlan.DEFAULT_CHUNK, DigestFormat.CRC_V2), r.digest());
        assertEquals(0, r.fromChunk());
        long allocated = allocated(src);
        assertTrue(r.bytesReceived() <= allocated * AllocatedRanges.BUDGET, r.bytesReceived() + " bytes sent for " + allocated + " allocated");
        assertTrue(r.bytesReceived() >= 24L * MIB, "the data was sent: " + r.bytesReceived());
        assertTrue(allocated(dst) <= allocated * AllocatedRanges.BUDGET + 4096, "the destination is sparse: " + allocated(dst) + " of "
                + allocated + " allocated on the source");
        assertEquals(Set.of(), files(y.root().resolve("transfers")), "the finished transfer's progress is forgotten");
    }

    // ---- identity ----------------------------------------------------------------------------

    @Test
    void aServerOrClientWithAnotherKeyThanThePinnedOneIsRefusedBeforeAnythingIsMade() throws Exception {
        TransferServer server = serve(xKeys, service());
        NodeKeys impostor = NodeKeys.generate("x");
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> client(server, impostor.fingerprint(), yKeys)
                .fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES, null));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "the client pins another server key: " + e);

        NodeKeys stranger = NodeKeys.generate("y");
        e = assertThrows(StatusRuntimeException.class, () -> client(server, xKeys.fingerprint(), stranger)
                .fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES, null));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "the server pins another client key: " + e);
        assertFalse(Files.exists(y.volumeImage(DST)), "no image made for a refused peer");
    }

    // ---- a cut transfer ----------------------------------------------------------------------

    @Test
    void aTransferCutInTheMiddleByTheSourcesRestartGoesOnFromItsCheckpoint() throws Exception {
        TransferServer first = serve(xKeys, service());
        AtomicInteger chunks = new AtomicInteger();
        RuntimeException cut = assertThrows(RuntimeException.class, () -> client(first, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(),
                y.volumeImage(DST), SIZE, OWN_RANGES, (i, bytes) -> {
                    if (chunks.incrementAndGet() == 14) {
                        first.close(); // the source node stops: its calls are cut
                    }
                }));
        assertTrue(cut instanceof StatusRuntimeException, "the cut is the transport's: " + cut);

        NodeKeys restarted = NodeKeys.generate("x"); // a restarted node has a new key pair, published anew
        TransferServer second = serve(restarted, service());
        TransferClient.Result r = client(second, restarted.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE,
                OWN_RANGES, null);

        long total = RANGES.of(x.volumeImage(SRC)).bytes();
        assertTrue(r.fromChunk() >= 14, "went on from the checkpoint, not from zero: chunk " + r.fromChunk());
        assertTrue(r.bytesReceived() < total, r.bytesReceived() + " bytes sent on resume, of " + total);
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), y.volumeImage(DST)));
    }

    // ---- a peer sending other data or ranges -------------------------------------------------

    @Test
    void aTamperedChunkIsRefusedWithNothingOfItWritten() throws Exception {
        Set<Path> before = tree(y.root());
        TransferServer rogue = serve(xKeys, new Rogue(x.volumeImage(SRC), 11, c -> {
            byte[] data = c.segments().get(0).data().clone();
            data[100] ^= 1; // one bit flipped on the way, the hash left as it was
            return new Chunk(c.index(), List.of(new Segment(c.segments().get(0).offset(), data)), c.hash());
        }));
        TransferException e = assertThrows(TransferException.class, () -> client(rogue, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(),
                y.volumeImage(DST), SIZE, OWN_RANGES, null));
        assertEquals(TransferException.Kind.MISMATCH, e.kind(), e.getMessage());
        assertEquals(Status.Code.DATA_LOSS, TransferStatus.codeOf(e.kind()));
        assertTrue(allZero(y.volumeImage(DST), 11L * MIB, MIB), "nothing of the tampered chunk written");
        assertEquals(-1, mismatchIn(10L * MIB, MIB), "the chunks before it are kept (written and checked)");
        assertOnlyTheImageAndItsProgressAdded(before);
    }

    @Test
    void aChunkWithARangeThePlanDoesNotHaveIsRefusedWithNothingOfItWritten() throws Exception {
        Set<Path> before = tree(y.root());
        TransferServer rogue = serve(xKeys, new Rogue(x.volumeImage(SRC), 5, c -> {
            List<Segment> more = new ArrayList<>(c.segments()); // chunk 5 is a hole: it gets data the plan does not have
            more.add(new Segment(5L * MIB + 4096, random(4096, 9)));
            return new Chunk(c.index(), more, c.hash());
        }));
        TransferException e = assertThrows(TransferException.class, () -> client(rogue, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(),
                y.volumeImage(DST), SIZE, OWN_RANGES, null));
        assertEquals(TransferException.Kind.INVALID, e.kind(), e.getMessage());
        assertEquals(Status.Code.INVALID_ARGUMENT, TransferStatus.codeOf(e.kind()));
        assertTrue(allZero(y.volumeImage(DST), 5L * MIB, MIB), "nothing of the unplanned range written");
        assertEquals(RANGES.of(x.volumeImage(SRC)).within(0, 5L * MIB), RANGES.of(y.volumeImage(DST)).ranges(),
                "the destination holds data only where the source's first chunks had it");
        assertOnlyTheImageAndItsProgressAdded(before);
    }

    // ---- digest formats: nodes of this release and of earlier ones ----------------------------

    @Test
    void aDestinationOfThisReleaseGetsAV2PlanAndOneOfAnEarlierReleaseAV1Plan() throws Exception {
        AtomicReference<PlanReply> answered = new AtomicReference<>();
        TransferServer server = serve(xKeys, new Release(service(), false, false, null, answered));
        TransferClient.Result r = client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES,
                null);
        assertEquals(DigestFormat.CRC_V2.wireName(), answered.get().getDigestFormat());
        assertEquals(ImageSource.digest(x.volumeImage(SRC), RANGES.of(x.volumeImage(SRC)), TransferPlan.DEFAULT_CHUNK, DigestFormat.CRC_V2),
                r.digest());

        Files.delete(y.volumeImage(DST));
        Instant now = Instant.now();
        grants.put("t-old", new TransferGrant("t-old", SRC, "x", "y", now.minusSeconds(60), now.plus(Duration.ofHours(1))));
        // a destination of an earlier release offers no format (it never sets field 4): the source plans in v1
        TransferServer forOld = serve(xKeys, new Release(service(), true, false, null, answered));
        r = client(forOld, xKeys.fingerprint(), yKeys).fetch("t-old", SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES, null);
        assertEquals(DigestFormat.SHA256_V1.wireName(), answered.get().getDigestFormat());
        assertEquals(ImageSource.digest(x.volumeImage(SRC), RANGES.of(x.volumeImage(SRC)), TransferPlan.DEFAULT_CHUNK,
                DigestFormat.SHA256_V1), r.digest(), "the digest of an earlier release, which such a destination composes");
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), y.volumeImage(DST)));
    }

    @Test
    void aSourceOfAnEarlierReleaseIsFetchedFromInV1() throws Exception {
        // it ignores the offer (field 4) and names no format in its answer (field 7): its plan is v1
        TransferServer old = serve(xKeys, new Release(service(), true, true, null, new AtomicReference<>()));
        TransferClient.Result r = client(old, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES,
                null);
        assertEquals(ImageSource.digest(x.volumeImage(SRC), RANGES.of(x.volumeImage(SRC)), TransferPlan.DEFAULT_CHUNK,
                DigestFormat.SHA256_V1), r.digest());
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), y.volumeImage(DST)));
    }

    @Test
    void aSourceAnsweringAFormatNotOfferedIsRefusedBeforeAnythingIsMade() throws Exception {
        Set<Path> before = tree(y.root());
        TransferServer odd = serve(xKeys, new Release(service(), false, false, "loopcsi-content-blake3-v9", new AtomicReference<>()));
        TransferException e = assertThrows(TransferException.class, () -> client(odd, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(),
                y.volumeImage(DST), SIZE, OWN_RANGES, null));
        assertEquals(TransferException.Kind.INVALID, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("loopcsi-content-blake3-v9") && e.getMessage().contains(DigestFormat.CRC_V2.wireName()),
                e.getMessage());
        assertEquals(before, tree(y.root()), "no image, no progress");
    }

    @Test
    void aTransferCutWhileInV1GoesOnInV1FromASourceOfThisRelease() throws Exception {
        // begun with a source of an earlier release (v1), cut; the source's node is upgraded meanwhile
        TransferServer old = serve(xKeys, new Release(service(), true, true, null, new AtomicReference<>()));
        AtomicInteger chunks = new AtomicInteger();
        assertThrows(RuntimeException.class, () -> client(old, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE,
                OWN_RANGES, (i, bytes) -> {
                    if (chunks.incrementAndGet() == 14) {
                        old.close();
                    }
                }));
        AtomicReference<PlanReply> answered = new AtomicReference<>();
        NodeKeys upgraded = NodeKeys.generate("x");
        TransferServer now = serve(upgraded, new Release(service(), false, false, null, answered));
        TransferClient.Result r = client(now, upgraded.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES,
                null);
        assertEquals(DigestFormat.SHA256_V1.wireName(), answered.get().getDigestFormat(), "the destination offered its progress's format first");
        assertTrue(r.fromChunk() >= 14, "went on from the checkpoint, not from zero: chunk " + r.fromChunk());
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), y.volumeImage(DST)));
    }

    /**
     * The real service as a node of another release would answer: {@code ignoreOffer} drops the
     * destination's digest formats before the service sees them (a destination, or a source, that
     * predates field 4), {@code unnamed} clears the format from the answer (a source that predates
     * field 7), {@code renamed} puts another name there.
     */
    static final class Release extends TransferGrpc.TransferImplBase {
        private final TransferService real;
        private final boolean ignoreOffer;
        private final boolean unnamed;
        private final String renamed;
        private final AtomicReference<PlanReply> answered;

        Release(TransferService real, boolean ignoreOffer, boolean unnamed, String renamed, AtomicReference<PlanReply> answered) {
            this.real = real;
            this.ignoreOffer = ignoreOffer;
            this.unnamed = unnamed;
            this.renamed = renamed;
            this.answered = answered;
        }

        @Override
        public void plan(PlanRequest req, StreamObserver<PlanReply> out) {
            real.plan(ignoreOffer ? req.toBuilder().clearDigestFormats().build() : req, new StreamObserver<>() {
                @Override
                public void onNext(PlanReply reply) {
                    PlanReply sent = unnamed ? reply.toBuilder().clearDigestFormat().build()
                            : renamed != null ? reply.toBuilder().setDigestFormat(renamed).build() : reply;
                    answered.set(sent);
                    out.onNext(sent);
                }

                @Override
                public void onError(Throwable t) {
                    out.onError(t);
                }

                @Override
                public void onCompleted() {
                    out.onCompleted();
                }
            });
        }

        @Override
        public void chunks(ChunksRequest req, StreamObserver<ChunkMessage> out) {
            real.chunks(req, out);
        }
    }

    // ---- authorisation -----------------------------------------------------------------------

    @Test
    void anUnknownOrUnauthorisedTransferOrSourceIsRefusedWithItsStatus() throws Exception {
        TransferServer server = serve(xKeys, service());
        TransferClient c = client(server, xKeys.fingerprint(), yKeys);
        assertCode(Status.Code.PERMISSION_DENIED, () -> c.fetch("pool-a.nobody", SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES,
                null), "no authorisation names the transfer");
        grants.put(T, new TransferGrant(T, SRC, "x", "z", Instant.now().minusSeconds(60), Instant.now().plusSeconds(600)));
        assertCode(Status.Code.PERMISSION_DENIED, () -> c.fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES, null),
                "authorised to another node");
        grants.put(T, new TransferGrant(T, SRC, "x", "y", Instant.now().minusSeconds(600), Instant.now().minusSeconds(60)));
        assertCode(Status.Code.PERMISSION_DENIED, () -> c.fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES, null),
                "outside the window");
        String gone = Ids.volumeIdFor("gone");
        grants.put(T, new TransferGrant(T, gone, "x", "y", Instant.now().minusSeconds(60), Instant.now().plusSeconds(600)));
        assertCode(Status.Code.NOT_FOUND, () -> c.fetch(T, gone, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES, null),
                "a source not on the node");

        grants.put(T, new TransferGrant(T, SRC, "x", "y", Instant.now().minusSeconds(60), Instant.now().plusSeconds(600)));
        var stub = TransferGrpc.newBlockingStub(io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", server.port()).sslContext(
                io.grpc.netty.GrpcSslContexts.forClient().keyManager(yKeys.privateKey(), yKeys.certificate()).trustManager(
                        new io.loopcsi.transfer.tls.PinnedTrustManager(() -> Set.of(xKeys.fingerprint()), "x")).build()).build());
        assertCode(Status.Code.NOT_FOUND, () -> stub.chunks(ChunksRequest.newBuilder().setTransferId(T).setSource(SRC).build()).hasNext(),
                "an authorised transfer ID whose plan the source never made");
        assertFalse(Files.exists(y.volumeImage(DST)), "nothing made for a refused transfer");
    }

    @Test
    void aDestinationOfAnotherSizeIsRefusedBeforeItsImageIsMade() throws Exception {
        TransferServer server = serve(xKeys, service());
        TransferException e = assertThrows(TransferException.class, () -> client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0,
                y.root(), y.volumeImage(DST), 2 * SIZE, OWN_RANGES, null));
        assertEquals(TransferException.Kind.INVALID, e.kind(), e.getMessage());
        assertFalse(Files.exists(y.volumeImage(DST)), "no image made for a plan of another size");
    }

    // ---- bounds (spec.transfer) --------------------------------------------------------------

    @Test
    void underABandwidthCapTheDataArrivesNoFasterThanTheCapAndNotMuchSlower() throws Exception {
        long cap = 8L * MIB;
        TransferServer server = serve(xKeys, service(new TransferService.Limits(new BandwidthCap(cap, System::nanoTime), 2)));
        List<long[]> seen = new ArrayList<>(); // {nanos, bytes} per chunk, as the destination wrote it
        long start = System.nanoTime();
        TransferClient.Result r = client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(), y.volumeImage(DST), SIZE, OWN_RANGES,
                (index, bytes) -> seen.add(new long[] {System.nanoTime(), bytes}));
        double seconds = (System.nanoTime() - start) / 1e9;
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), y.volumeImage(DST)), "the same content, only slower");

        // from the first chunk's arrival (before it nothing waits), every byte after it is paced
        long first = seen.stream().filter(c -> c[1] > 0).findFirst().orElseThrow()[0];
        long last = seen.get(seen.size() - 1)[0];
        long after = seen.stream().filter(c -> c[0] > first).mapToLong(c -> c[1]).sum();
        double paced = (last - first) / 1e9;
        assertTrue(after <= cap * paced * 1.02 + MIB, after + " bytes in " + paced + " s: more than the cap of " + cap + " bytes/s");
        // ~24 MiB of data at 8 MiB/s: about 3 s; the plan and a loaded machine add a little, never double
        assertTrue(seconds < r.bytesReceived() / (double) cap * 2 + 2, "the cap slowed the transfer far below itself: " + seconds + " s for "
                + r.bytesReceived() + " bytes");
        assertTrue(seconds >= (r.bytesReceived() - 2.0 * MIB) / cap, "faster than the cap: " + seconds + " s");
    }

    @Test
    void aTransferOverTheNodesConcurrencyIsRefusedResourceExhaustedAndServedOnceOneEnds() throws Exception {
        TransferServer server = serve(xKeys, service(new TransferService.Limits(new BandwidthCap(8L * MIB, System::nanoTime), 1)));
        var firstChunk = new java.util.concurrent.CountDownLatch(1);
        var first = java.util.concurrent.CompletableFuture.supplyAsync(() -> client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, y.root(),
                y.volumeImage(DST), SIZE, OWN_RANGES, (index, bytes) -> firstChunk.countDown()));
        assertTrue(firstChunk.await(30, java.util.concurrent.TimeUnit.SECONDS), "the first transfer streams");
        Path z = Files.createDirectory(dir.resolve("z"));
        StatusRuntimeException busy = assertThrows(StatusRuntimeException.class, () -> client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC,
                0, z, z.resolve("second.img"), SIZE, OWN_RANGES, null));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, busy.getStatus().getCode(), busy.getMessage());
        assertTrue(busy.getStatus().getDescription().contains("serves 1 transfers at once"), busy.getStatus().getDescription());
        first.get(60, java.util.concurrent.TimeUnit.SECONDS);
        // the slot is free again: the one refused goes on from its checkpoint (none: nothing of it was sent)
        TransferClient.Result r = client(server, xKeys.fingerprint(), yKeys).fetch(T, SRC, 0, z, z.resolve("second.img"), SIZE, OWN_RANGES,
                null);
        assertEquals(0, r.fromChunk());
        assertEquals(-1, Files.mismatch(x.volumeImage(SRC), z.resolve("second.img")));
    }

    // ---- helpers -----------------------------------------------------------------------------

    TransferService service() {
        return service(TransferService.Limits.NONE);
    }

    TransferService service(TransferService.Limits limits) {
        return new TransferService("x", new SourceImages(x), id -> Optional.ofNullable(grants.get(id)), caller -> Optional.ofNullable(
                nodeByFingerprint.get(caller.certificateFingerprint())).orElseThrow(() -> new TransferException(TransferException.Kind.DENIED,
                        "unknown certificate")), RANGES, Clock.systemUTC(), limits);
    }

    TransferServer serve(NodeKeys keys, BindableService service) throws IOException {
        TransferServer s = TransferServer.start("127.0.0.1", 0, keys, () -> Set.of(yKeys.fingerprint()), service);
        open.add(s);
        return s;
    }

    TransferClient client(TransferServer server, String pin, NodeKeys keys) {
        TransferClient c = new TransferClient("127.0.0.1", server.port(), pin, keys, null);
        open.add(c);
        return c;
    }

    /** A source node that sends the true plan but alters one chunk. */
    static final class Rogue extends TransferGrpc.TransferImplBase {
        private final Path image;
        private final long bad;
        private final Function<Chunk, Chunk> alter;

        Rogue(Path image, long bad, Function<Chunk, Chunk> alter) {
            this.image = image;
            this.bad = bad;
            this.alter = alter;
        }

        private ImageSource source() {
            return ImageSource.plan(T, SRC, image, RANGES.of(image), TransferPlan.DEFAULT_CHUNK, DigestFormat.CRC_V2);
        }

        @Override
        public void plan(PlanRequest req, StreamObserver<PlanReply> out) {
            try (ImageSource s = source()) {
                out.onNext(Messages.toWire(s.plan()));
            }
            out.onCompleted();
        }

        @Override
        public void chunks(ChunksRequest req, StreamObserver<ChunkMessage> out) {
            try (ImageSource s = source()) {
                for (long i = req.getFromChunk(); i < s.plan().chunks(); i++) {
                    Chunk c = s.read(i);
                    out.onNext(Messages.toWire(i == bad ? alter.apply(c) : c));
                }
            }
            out.onCompleted();
        }
    }

    void assertOnlyTheImageAndItsProgressAdded(Set<Path> before) throws IOException {
        Set<Path> added = new TreeSet<>(tree(y.root()));
        added.removeAll(before);
        assertEquals(Set.of(y.volumeImage(DST), y.root().resolve("transfers"), y.root().resolve("transfers").resolve(T + ".json")), added,
                "nothing written outside the destination's image and its progress");
    }

    static void assertCode(Status.Code code, Runnable r, String why) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, r::run, why);
        assertEquals(code, e.getStatus().getCode(), why + ": " + e.getStatus());
    }

    long mismatchIn(long at, int length) throws IOException {
        byte[] a = read(x.volumeImage(SRC), at, length);
        byte[] b = read(y.volumeImage(DST), at, length);
        return java.util.Arrays.mismatch(a, b);
    }

    static boolean allZero(Path f, long at, int length) throws IOException {
        for (byte b : read(f, at, length)) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    static byte[] read(Path f, long at, int length) throws IOException {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "r")) {
            byte[] b = new byte[length];
            r.seek(at);
            r.readFully(b);
            return b;
        }
    }

    static Set<Path> tree(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.collect(java.util.stream.Collectors.toCollection(TreeSet::new));
        }
    }

    static Set<String> files(Path d) throws IOException {
        if (!Files.isDirectory(d)) {
            return Set.of();
        }
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet());
        }
    }

    static Path sparse(Path f, long size) throws IOException {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.setLength(size);
        }
        return f;
    }

    static void write(Path f, long at, byte[] data) throws IOException {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.seek(at);
            r.write(data);
            r.getFD().sync();
        }
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        b[0] = 1;
        b[n - 1] = 1;
        return b;
    }

    static long allocated(Path f) {
        String[] s = RUN.run("stat", "-c", "%b %B", f.toString()).trim().split("\\s+");
        return Long.parseLong(s[0]) * Long.parseLong(s[1]);
    }
}
