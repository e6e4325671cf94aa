package io.loopcsi.node;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.engine.VolumeEngine;
import io.loopcsi.engine.VolumeProvider;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.TransferObserver;
import io.loopcsi.transfer.kube.LoopTransferGrants;
import io.loopcsi.transfer.kube.PublishedPins;
import io.loopcsi.transfer.kube.TokenReviewIdentity;
import io.loopcsi.transfer.service.BandwidthCap;
import io.loopcsi.transfer.service.SourceImages;
import io.loopcsi.transfer.service.TransferServer;
import io.loopcsi.transfer.service.TransferService;
import io.loopcsi.transfer.tls.NodeKeys;

/**
 * The node's transfer server (docs/architecture.md, "Transfer"): a key pair made now, the pool's
 * volumes and snapshots on this node served to callers that the pool's LoopTransfers authorise and
 * whose tokens and certificates name their node. The node publishes {@link #fingerprint} in its
 * LoopPoolNode, where peers find the certificate to pin.
 */
final class TransferEndpoint implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(TransferEndpoint.class);
    /** xfs_io's walk of an image's extents: seconds even for a large, fragmented image. */
    private static final Duration COMMANDS = Duration.ofMinutes(5);

    private final TransferServer server;
    private final NodeKeys keys;
    private final String host;
    private final PoolDirectory dir;
    /** Deletes the copies of ended transfers (TransferSweeper); null without an engine here. */
    private final ScheduledExecutorService sweeps;

    private TransferEndpoint(TransferServer server, NodeKeys keys, String host, PoolDirectory dir, ScheduledExecutorService sweeps) {
        this.server = server;
        this.keys = keys;
        this.host = host;
        this.dir = dir;
        this.sweeps = sweeps;
    }

    static TransferEndpoint start(String address, KubernetesClient client, String pool, VolumeProvider engine, Path dataDir, String namespace,
            String nodeAccount, TransferService.Limits limits, Duration sweep, TransferObserver observer) throws IOException {
        return start(address, client, pool, engine, dataDir, namespace, nodeAccount, limits, sweep, observer, null);
    }

    /** @param fetches the destination's abandoned fetches to sweep with the source's copies (null: none) */
    static TransferEndpoint start(String address, KubernetesClient client, String pool, VolumeProvider engine, Path dataDir, String namespace,
            String nodeAccount, TransferService.Limits limits, Duration sweep, TransferObserver observer, AbandonedFetches fetches)
            throws IOException {
        int colon = address.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalStateException("the transfer address " + address + " is not host:port");
        }
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        PoolDirectory dir = engine instanceof VolumeEngine v ? v.pool() : new PoolDirectory(dataDir);
        NodeKeys keys = NodeKeys.generate(engine.nodeId());
        VolumeEngine volumes = engine instanceof VolumeEngine v ? v : null;
        LoopTransferGrants grants = new LoopTransferGrants(client, pool);
        // a volume is read from a point-in-time copy made for the transfer: it may be in use meanwhile
        SourceImages sources = volumes == null ? new SourceImages(dir) : new SourceImages(dir, volumes::transferCopy);
        TransferService service = new TransferService(engine.nodeId(), sources, grants,
                new TokenReviewIdentity(client, pool, namespace, nodeAccount, nodeAccount), new AllocatedRanges(new CommandRunner(COMMANDS)),
                Clock.systemUTC(), limits).observe(observer);
        TransferServer server = TransferServer.start(host, port, keys, new PublishedPins(client, pool), service);
        LOG.infof("transfers of pool %s served on %s:%d, certificate SHA-256 %s, at most %d at once, %s", pool, host, server.port(),
                keys.fingerprint(), limits.concurrent(), limits.cap().limited() ? "capped" : "no bandwidth cap");
        ScheduledExecutorService sweeps = null;
        if (volumes != null) {
            sweeps = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "loopcsi-transfer-sweep");
                t.setDaemon(true);
                return t;
            });
            List<TransferSweeper.Held> held = new java.util.ArrayList<>(List.of(new TransferSweeper.Held(volumes::transferCopies,
                    volumes::dropTransferCopy), new TransferSweeper.Held(service::planned, service::forget)));
            if (fetches != null) {
                held.add(fetches.held());
            }
            TransferSweeper sweeper = new TransferSweeper(grants, held);
            sweeps.scheduleWithFixedDelay(sweeper, 0, Math.max(1, sweep.toMillis()), TimeUnit.MILLISECONDS);
        }
        return new TransferEndpoint(server, keys, host, dir, sweeps);
    }

    /** The bounds of what this node serves (loopcsi.node.transfer-bandwidth, -concurrency; a bad value stops the start). */
    static TransferService.Limits limits(java.util.Optional<Long> bytesPerSecond, int concurrent) {
        try {
            return new TransferService.Limits(bytesPerSecond.map(b -> new BandwidthCap(b, System::nanoTime)).orElse(BandwidthCap.unlimited()),
                    concurrent);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("loopcsi.node.transfer-bandwidth / transfer-concurrency: " + e.getMessage(), e);
        }
    }

    String fingerprint() {
        return keys.fingerprint();
    }

    /** host:port as bound (the port chosen when the address asked for 0). */
    String address() {
        return host + ":" + server.port();
    }

    /**
     * The client side, with this node's keys: fetches into the pool directory's images, progress in
     * its transfers/; at most concurrent at once (the same limit as served: transfer-concurrency).
     */
    TransferFetch fetcher(KubernetesClient client, String pool, VolumeEngine engine, Path tokenFile, TransferObserver observer, int concurrent) {
        return new TransferFetch(client, pool, engine, keys, tokenFile, new AllocatedRanges(new CommandRunner(COMMANDS)), dir.root(), observer,
                concurrent);
    }

    int port() {
        return server.port();
    }

    @Override
    public void close() {
        if (sweeps != null) {
            sweeps.shutdownNow();
        }
        server.close();
    }
}
