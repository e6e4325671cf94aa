package io.loopcsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.loopcsi.transfer.TransferException;
import io.loopcsi.transfer.TransferGrant;
import io.loopcsi.transfer.service.Grants;

/** What a source node holds for a transfer goes when, and only when, the transfer is known to be over. */
class TransferSweeperTest {

    private static final Instant LONG_AGO = Instant.parse("2026-01-01T00:00:00Z");

    private final Set<String> copies = new TreeSet<>(Set.of("authorised", "gone", "foreign", "expired"));
    private final Set<String> plans = new TreeSet<>(Set.of("authorised", "gone", "plan-only-gone"));
    private final List<String> asked = new ArrayList<>();

    private final Grants grants = id -> {
        asked.add(id);
        return switch (id) {
            case "authorised" -> Optional.of(grant(id, Instant.now().plusSeconds(600)));
            // the controller renews the window of a long transfer: a passed window is not the end
            case "expired" -> Optional.of(grant(id, LONG_AGO.plusSeconds(60)));
            case "foreign" -> throw new TransferException(TransferException.Kind.DENIED, "LoopTransfer names pool other");
            default -> Optional.empty();
        };
    };

    private static TransferGrant grant(String id, Instant notAfter) {
        return new TransferGrant(id, "vol-src", "node-a", "node-b", LONG_AGO, notAfter);
    }

    private TransferSweeper sweeper(Grants g) {
        return new TransferSweeper(g, List.of(new TransferSweeper.Held(() -> Set.copyOf(copies), copies::remove),
                new TransferSweeper.Held(() -> Set.copyOf(plans), plans::remove)));
    }

    @Test
    void releasesCopiesAndPlansOfTransfersNoObjectAuthorises() {
        assertEquals(Set.of("foreign", "gone", "plan-only-gone"), sweeper(grants).sweep());
        assertEquals(Set.of("authorised", "expired"), copies);
        assertEquals(Set.of("authorised"), plans);
        assertEquals(5, asked.size(), "one look at the API per transfer, not per holding: " + asked);
    }

    @Test
    void keepsEverythingWhileTheApiServerCannotSay() {
        TransferSweeper s = sweeper(id -> {
            throw new IllegalStateException("connection refused");
        });
        s.run(); // logged, not thrown: the next round tries again
        assertEquals(4, copies.size());
        assertEquals(3, plans.size());
    }

    @Test
    void nothingHeldAsksNothing() {
        copies.clear();
        plans.clear();
        assertEquals(Set.of(), sweeper(grants).sweep());
        assertEquals(List.of(), asked, "an idle node does not call the API server");
    }
}
