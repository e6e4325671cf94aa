package io.loopcsi.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A volume's mutable parameters (CSI {@code mutable_parameters}: at CreateVolume and through
 * ControllerModifyVolume; Kubernetes VolumeAttributesClass parameters). The only keys:
 * <ul>
 * <li>{@code provisioning}: {@code thin} (default: a sparse image, host space taken as it is
 * written) or {@code thick} (every block of the image allocated now with fallocate, so writes can
 * never meet a full host filesystem). Going back to thin keeps the blocks allocated until the
 * filesystem in the volume discards them (fstrim).</li>
 * <li>{@code directIO}: {@code auto} (default: direct I/O where the host filesystem allows it),
 * {@code on} (required: refused where the host cannot) or {@code off} (buffered I/O through the
 * host page cache) on the volume's loop device, switched live on an attached device.</li>
 * </ul>
 *
 * @param given the keys the caller set, normalized to lower case values
 */
public record MutableParameters(Map<String, String> given) {

    public static final String PROVISIONING = "provisioning";
    public static final String DIRECT_IO = "directIO";
    public static final MutableParameters NONE = new MutableParameters(Map.of());

    /** Direct I/O on the loop device. */
    public enum DirectIo {
        AUTO, ON, OFF
    }

    private static final Map<String, List<String>> VALUES = Map.of(
            PROVISIONING, List.of("thin", "thick"),
            DIRECT_IO, List.of("auto", "on", "off"));

    public MutableParameters {
        given = given == null ? Map.of() : Map.copyOf(given);
    }

    /**
     * Checks every key and value; INVALID_ARGUMENT naming each unknown key and each bad value
     * (with the allowed ones). Nothing is applied before this passes.
     */
    public static MutableParameters parse(String field, Map<String, String> params) {
        List<String> bad = new ArrayList<>();
        Map<String, String> ok = new TreeMap<>();
        for (Map.Entry<String, String> e : new TreeMap<>(params).entrySet()) {
            List<String> allowed = VALUES.get(e.getKey());
            if (allowed == null) {
                bad.add("unknown key " + Ids.quote(e.getKey()));
            } else if (!allowed.contains(e.getValue().toLowerCase(java.util.Locale.ROOT))) {
                bad.add(e.getKey() + "=" + Ids.quote(e.getValue()) + " (one of " + String.join(", ", allowed) + ")");
            } else {
                ok.put(e.getKey(), e.getValue().toLowerCase(java.util.Locale.ROOT));
            }
        }
        if (!bad.isEmpty()) {
            throw EngineException.invalid(field + ": " + String.join("; ", bad) + "; the mutable parameters are "
                    + PROVISIONING + " (thin, thick) and " + DIRECT_IO + " (auto, on, off); nothing was changed");
        }
        return new MutableParameters(ok);
    }

    /** These parameters with changes' keys replaced. */
    public MutableParameters with(MutableParameters changes) {
        Map<String, String> m = new TreeMap<>(given);
        m.putAll(changes.given);
        return new MutableParameters(m);
    }

    public boolean thick() {
        return "thick".equals(given.get(PROVISIONING));
    }

    public DirectIo directIo() {
        return DirectIo.valueOf(given.getOrDefault(DIRECT_IO, "auto").toUpperCase(java.util.Locale.ROOT));
    }
}
