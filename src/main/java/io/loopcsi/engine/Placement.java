package io.loopcsi.engine;

import java.util.List;
import java.util.Objects;

/**
 * Where a CreateVolume may put a volume: CSI's accessibility requirements reduced to node names
 * (topology key topology.loopcsi.io/node). A null entry is a topology without that key, which
 * any node satisfies. Empty requisite: anywhere.
 */
public record Placement(List<String> requisite, List<String> preferred) {

    public static final Placement ANYWHERE = new Placement(List.of(), List.of());

    public Placement {
        requisite = requisite == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(requisite));
        preferred = preferred == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(preferred));
    }

    public boolean allows(String node) {
        return requisite.isEmpty() || requisite.stream().anyMatch(n -> n == null || Objects.equals(n, node));
    }
}
