package io.loopcsi.cli.csc;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import csi.v1.VolumeCapability;
import csi.v1.VolumeCapability.AccessMode.Mode;

/**
 * Parses csc's {@code --cap MODE,TYPE[,FSTYPE[,MNTFLAGS...]]} into a {@link VolumeCapability}.
 * <ul>
 * <li>MODE: an access mode name ({@code SINGLE_NODE_WRITER}, any case) or its number ({@code 1});
 * {@code UNKNOWN}/{@code 0} is accepted so a driver's validation can be exercised.</li>
 * <li>TYPE: {@code block} or {@code 1}, {@code mount} or {@code 2} (any case).</li>
 * <li>FSTYPE (mount only): may be empty or left out, which asks for the driver's default.</li>
 * <li>MNTFLAGS (mount only): everything after FSTYPE, comma-separated, each non-empty.</li>
 * </ul>
 * Stricter than csc where csc silently sends something else than was asked: an unknown mode
 * number, or FSTYPE/flags on a block capability, are errors here.
 */
final class CapabilityParser {

    static final String SYNTAX = "MODE,TYPE[,FSTYPE[,MNTFLAGS...]]";

    private CapabilityParser() {
    }

    static VolumeCapability parse(String spec) throws UsageException {
        List<String> parts = Arrays.asList(spec.split(",", -1));
        if (parts.size() < 2) {
            throw bad(spec, "expected " + SYNTAX);
        }
        VolumeCapability.Builder cap = VolumeCapability.newBuilder();
        cap.getAccessModeBuilder().setMode(mode(spec, parts.get(0).strip()));
        String type = parts.get(1).strip();
        if (type.equals("1") || type.equalsIgnoreCase("block")) {
            if (parts.size() > 2) {
                throw bad(spec, "a block capability takes no FSTYPE or mount flags, found \""
                        + String.join(",", parts.subList(2, parts.size())) + "\"");
            }
            cap.setBlock(VolumeCapability.BlockVolume.getDefaultInstance());
        } else if (type.equals("2") || type.equalsIgnoreCase("mount")) {
            VolumeCapability.MountVolume.Builder mount = cap.getMountBuilder();
            if (parts.size() > 2) {
                mount.setFsType(parts.get(2).strip());
            }
            for (int i = 3; i < parts.size(); i++) {
                String flag = parts.get(i).strip();
                if (flag.isEmpty()) {
                    throw bad(spec, "mount flag " + (i - 2) + " is empty");
                }
                mount.addMountFlags(flag);
            }
        } else {
            throw bad(spec, "access type \"" + type + "\" is not block, mount, 1 or 2");
        }
        return cap.build();
    }

    private static Mode mode(String spec, String m) throws UsageException {
        if (m.isEmpty()) {
            throw bad(spec, "access mode is empty");
        }
        if (m.chars().allMatch(Character::isDigit)) {
            Mode mode = m.length() > 9 ? null : Mode.forNumber(Integer.parseInt(m));
            if (mode == null) {
                throw bad(spec, "access mode " + m + " is not a CSI access mode number (0-" + (Mode.values().length - 2) + ")");
            }
            return mode;
        }
        try {
            Mode mode = Mode.valueOf(m.toUpperCase(Locale.ROOT));
            if (mode != Mode.UNRECOGNIZED) {
                return mode;
            }
        } catch (IllegalArgumentException ignored) {
            // reported below
        }
        throw bad(spec, "access mode \"" + m + "\" is not one of " + modeNames());
    }

    private static String modeNames() {
        StringBuilder b = new StringBuilder();
        for (Mode mode : Mode.values()) {
            if (mode != Mode.UNRECOGNIZED) {
                b.append(b.length() == 0 ? "" : ", ").append(mode.name());
            }
        }
        return b.toString();
    }

    private static UsageException bad(String spec, String why) {
        return new UsageException("--cap \"" + spec + "\": " + why);
    }
}
