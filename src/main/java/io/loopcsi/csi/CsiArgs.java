package io.loopcsi.csi;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import csi.v1.VolumeCapability;
import csi.v1.VolumeCapability.AccessMode.Mode;
import io.loopcsi.engine.Filesystems;
import io.loopcsi.engine.Ids;
import io.loopcsi.engine.MountFlags;
import io.loopcsi.engine.VolumeMode;

/**
 * Validation of CSI request fields, before anything reaches the engine. Every failure is
 * INVALID_ARGUMENT naming the field and what is wrong with it.
 */
final class CsiArgs {

    /** The CSI spec's size limit for string fields. */
    static final int MAX_STRING_BYTES = 128;
    static final int MAX_PATH_BYTES = 4096;

    /**
     * How a capability asks for a volume to be used.
     *
     * @param singleWriter SINGLE_NODE_SINGLE_WRITER: one published target at a time
     */
    record Access(VolumeMode mode, String fsType, List<String> mountFlags, boolean readOnly, boolean singleWriter) {
    }

    private CsiArgs() {
    }

    static String requireName(String field, String name) {
        requireString(field, name, MAX_STRING_BYTES);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if ((c <= 0x08) || c == 0x0b || c == 0x0c || (c >= 0x0e && c <= 0x1f) || (c >= 0x7f && c <= 0x9f)) {
                throw GrpcErrors.invalid(field + ": contains control character U+" + String.format("%04X", (int) c));
            }
        }
        return name;
    }

    /** A volume or snapshot ID as received: present and within the spec's size limit. Its alphabet is the engine's to check. */
    static String requireId(String field, String id) {
        requireString(field, id, MAX_STRING_BYTES);
        if (id.indexOf('\0') >= 0) {
            throw GrpcErrors.invalid(field + ": contains a NUL character");
        }
        return id;
    }

    static Path requirePath(String field, String path) {
        requireString(field, path, MAX_PATH_BYTES);
        if (path.indexOf('\0') >= 0) {
            throw GrpcErrors.invalid(field + ": contains a NUL character");
        }
        if (!path.startsWith("/")) {
            throw GrpcErrors.invalid(field + ": " + Ids.quote(path) + " is not an absolute path");
        }
        String trimmed = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        Path p = Path.of(trimmed);
        if (!p.normalize().toString().equals(trimmed) || trimmed.contains("/./") || trimmed.endsWith("/.")) {
            throw GrpcErrors.invalid(field + ": " + Ids.quote(path) + " is not a normalized path (no '.', '..' or '//' components)");
        }
        return p;
    }

    /** An OPTIONAL path: empty is null, anything else must be a valid path. */
    static Path optionalPath(String field, String path) {
        return path.isEmpty() ? null : requirePath(field, path);
    }

    /**
     * A path the CO names as where a volume is (NodeGetVolumeStats, NodeExpandVolume): present and
     * within limits, else INVALID_ARGUMENT; a path that cannot be where the volume is (relative,
     * not normalized) is a place the volume does not exist: null, for the caller's NOT_FOUND.
     */
    static Path volumePath(String field, String path) {
        requireString(field, path, MAX_PATH_BYTES);
        if (path.indexOf('\0') >= 0) {
            throw GrpcErrors.invalid(field + ": contains a NUL character");
        }
        try {
            return requirePath(field, path);
        } catch (io.grpc.StatusRuntimeException notAbsolute) {
            return null;
        }
    }

    /** A capacity range's own consistency (the volume decides what sizes it can take). */
    static void requireRange(String field, csi.v1.CapacityRange r) {
        if (r.getRequiredBytes() < 0 || r.getLimitBytes() < 0) {
            throw GrpcErrors.invalid(field + ": required_bytes (" + r.getRequiredBytes() + ") and limit_bytes (" + r.getLimitBytes()
                    + ") must not be negative");
        }
        if (r.getLimitBytes() > 0 && r.getRequiredBytes() > r.getLimitBytes()) {
            throw GrpcErrors.invalid(field + ": required_bytes " + r.getRequiredBytes() + " is larger than limit_bytes " + r.getLimitBytes());
        }
    }

    private static void requireString(String field, String value, int maxBytes) {
        if (value == null || value.isEmpty()) {
            throw GrpcErrors.invalid(field + " is required");
        }
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxBytes) {
            throw GrpcErrors.invalid(field + ": " + bytes + " bytes, at most " + maxBytes + " are allowed");
        }
    }

    static void requireMapSize(String field, Map<String, String> map) {
        int bytes = 0;
        for (Map.Entry<String, String> e : map.entrySet()) {
            bytes += e.getKey().getBytes(StandardCharsets.UTF_8).length + e.getValue().getBytes(StandardCharsets.UTF_8).length;
        }
        if (bytes > 4096) {
            throw GrpcErrors.invalid(field + ": " + bytes + " bytes, the CSI spec allows at most 4 KiB");
        }
    }

    /** One capability: access type set, a supported access mode, a supported fs type, safe mount flags. */
    static Access access(String field, VolumeCapability cap) {
        Mode mode = cap.getAccessMode().getMode();
        boolean readOnly = switch (mode) {
            case SINGLE_NODE_WRITER, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER -> false;
            case SINGLE_NODE_READER_ONLY, MULTI_NODE_READER_ONLY -> true;
            case UNKNOWN -> throw GrpcErrors.invalid(field + ".access_mode is required");
            case MULTI_NODE_SINGLE_WRITER, MULTI_NODE_MULTI_WRITER -> throw GrpcErrors.invalid(field + ".access_mode " + mode
                    + " is not supported: a loop volume lives on one node (use a SINGLE_NODE_* mode or MULTI_NODE_READER_ONLY)");
            default -> throw GrpcErrors.invalid(field + ".access_mode " + cap.getAccessMode().getModeValue() + " is unknown");
        };
        boolean single = mode == Mode.SINGLE_NODE_SINGLE_WRITER;
        switch (cap.getAccessTypeCase()) {
            case BLOCK:
                return new Access(VolumeMode.BLOCK, "", List.of(), readOnly, single);
            case MOUNT:
                String fs = cap.getMount().getFsType();
                if (!fs.isEmpty() && !Filesystems.SUPPORTED.contains(fs)) {
                    throw GrpcErrors.invalid(field + ".mount.fs_type " + Ids.quote(fs) + " is not supported; use one of "
                            + String.join(", ", Filesystems.SUPPORTED.stream().sorted().toList()));
                }
                if (!cap.getMount().getVolumeMountGroup().isEmpty()) {
                    throw GrpcErrors.invalid(field + ".mount.volume_mount_group is not supported (no VOLUME_MOUNT_GROUP capability)");
                }
                try {
                    return new Access(VolumeMode.FILESYSTEM, fs, MountFlags.validate(cap.getMount().getMountFlagsList()), readOnly,
                            single);
                } catch (io.loopcsi.engine.EngineException e) {
                    throw GrpcErrors.invalid(field + "." + e.getMessage());
                }
            default:
                throw GrpcErrors.invalid(field + ": one of block or mount access type is required");
        }
    }

    /**
     * GetCapacity's capabilities: the smallest volume that satisfies all of them, or empty when this
     * driver cannot make such a volume at all (its capacity for them is then 0, not an error). Lenient
     * where real clients are: csi-provisioner v2.1 sends one mount capability with access mode UNKNOWN
     * ("the standard makes it mandatory to pass something, therefore we pick something rather
     * arbitrarily", external-provisioner pkg/capacity/capacity.go at v2.1.2), later releases send
     * none, and neither names an fs_type. So any access mode and an empty fs_type are accepted; only a
     * capability without an access type (the spec's MUST, which no client omits) is INVALID_ARGUMENT.
     */
    static java.util.OptionalLong capacityMinimum(String field, List<VolumeCapability> caps) {
        long minimum = io.loopcsi.engine.Sizes.MIB;
        VolumeCapability.AccessTypeCase type = null;
        for (int i = 0; i < caps.size(); i++) {
            VolumeCapability cap = caps.get(i);
            VolumeCapability.AccessTypeCase t = cap.getAccessTypeCase();
            if (t == VolumeCapability.AccessTypeCase.ACCESSTYPE_NOT_SET) {
                throw GrpcErrors.invalid(field + "[" + i + "]: one of block or mount access type is required");
            }
            Mode mode = cap.getAccessMode().getMode();
            if (mode == Mode.MULTI_NODE_SINGLE_WRITER || mode == Mode.MULTI_NODE_MULTI_WRITER || mode == Mode.UNRECOGNIZED
                    || (type != null && type != t)) {
                return java.util.OptionalLong.empty();
            }
            type = t;
            if (t == VolumeCapability.AccessTypeCase.MOUNT) {
                String fs = cap.getMount().getFsType().isEmpty() ? Filesystems.DEFAULT : cap.getMount().getFsType();
                if (!Filesystems.SUPPORTED.contains(fs) || !cap.getMount().getVolumeMountGroup().isEmpty()) {
                    return java.util.OptionalLong.empty();
                }
                minimum = Math.max(minimum, Filesystems.minimumBytes(fs));
            }
        }
        return java.util.OptionalLong.of(minimum);
    }

    /** All capabilities of a request; they must agree on block vs mount and on the fs type. */
    static Access accessOfAll(String field, List<VolumeCapability> caps) {
        if (caps.isEmpty()) {
            throw GrpcErrors.invalid(field + " is required");
        }
        Access first = null;
        String fs = "";
        for (int i = 0; i < caps.size(); i++) {
            Access a = access(field + "[" + i + "]", caps.get(i));
            if (first != null && first.mode() != a.mode()) {
                throw GrpcErrors.invalid(field + ": mixes block and mount access types; a volume is one or the other");
            }
            if (!a.fsType().isEmpty()) {
                if (!fs.isEmpty() && !fs.equals(a.fsType())) {
                    throw GrpcErrors.invalid(field + ": asks for both " + fs + " and " + a.fsType());
                }
                fs = a.fsType();
            }
            if (first == null) {
                first = a;
            }
        }
        if (first.mode() == VolumeMode.FILESYSTEM && fs.isEmpty()) {
            fs = Filesystems.DEFAULT;
        }
        return new Access(first.mode(), fs, first.mountFlags(), first.readOnly(), first.singleWriter());
    }
}
