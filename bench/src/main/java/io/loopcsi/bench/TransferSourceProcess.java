package io.loopcsi.bench;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

import io.loopcsi.engine.CommandRunner;
import io.loopcsi.engine.PoolDirectory;
import io.loopcsi.transfer.AllocatedRanges;
import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.service.SourceImages;
import io.loopcsi.transfer.service.TransferServer;
import io.loopcsi.transfer.service.TransferService;
import io.loopcsi.transfer.tls.NodeKeys;

/**
 * Node x of {@link TwoProcesses}: a JVM of its own serving pool x's source through the production
 * TransferServer and TransferService, with the bench's in-process wiring of grants and identity
 * (any transfer of the source to the client whose certificate fingerprint it is given, for an hour).
 * Arguments: pool directory, source volume ID, the client's fingerprint. Prints
 * {@code READY <port> <its fingerprint>} once it serves, and ends when its standard input does.
 */
public final class TransferSourceProcess {

    private TransferSourceProcess() {
    }

    public static void main(String[] args) throws Exception {
        Bench.quietNetty();
        Path pool = Path.of(args[0]);
        String source = args[1];
        String client = args[2];
        Instant start = Instant.now();
        PoolDirectory x = new PoolDirectory(pool);
        NodeKeys keys = NodeKeys.generate("x");
        TransferService service = new TransferService("x", new SourceImages(x),
                id -> Optional.of(new TransferGrant(id, source, "x", "y", start.minusSeconds(60), start.plus(Duration.ofHours(1)))), caller -> {
                    if (!caller.certificateFingerprint().equals(client)) {
                        throw new TransferException(TransferException.Kind.DENIED, "unknown certificate");
                    }
                    return "y";
                }, new AllocatedRanges(new CommandRunner(Duration.ofMinutes(1))), Clock.systemUTC());
        try (TransferServer server = TransferServer.start("127.0.0.1", 0, keys, () -> Set.of(client), service)) {
            System.out.println("READY " + server.port() + " " + keys.fingerprint());
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the bench closes this process' standard input
            }
        } finally {
            x.lock().close();
        }
    }
}
