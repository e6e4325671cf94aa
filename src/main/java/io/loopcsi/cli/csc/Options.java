package io.loopcsi.cli.csc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import csi.v1.CapacityRange;
import csi.v1.VolumeCapability;
import io.loopcsi.csi.Endpoint;

/**
 * The flags of one command line, parsed into request values all at once, so that a malformed
 * value is reported before anything is sent (a multi-volume command never half-runs on a typo).
 * Absent flags read as the proto3 defaults (empty string, empty map, no capabilities).
 */
final class Options {

    static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(1);

    final Endpoint endpoint;
    final Duration timeout;
    final boolean json;
    final List<VolumeCapability> caps;
    final Optional<CapacityRange> capacityRange;
    final Map<String, String> params;
    final Map<String, String> mutableParams;
    final List<String> sourceVolumes;
    final List<String> snapshotIds;
    final Map<String, String> volumeContext;
    final Map<String, String> publishContext;
    final String stagingTargetPath;
    final String targetPath;
    final boolean readOnly;
    final String sourceVolume;
    final String sourceSnapshot;
    final String snapshotId;
    final int maxEntries;
    final String startingToken;
    final boolean paging;

    private Options(CommandLine line, Map<String, String> env) throws UsageException {
        endpoint = endpoint(line.last(Flag.ENDPOINT), env.get("CSI_ENDPOINT"));
        timeout = line.has(Flag.TIMEOUT) ? Values.duration(Flag.TIMEOUT, line.last(Flag.TIMEOUT)) : DEFAULT_TIMEOUT;
        json = format(line.last(Flag.FORMAT));
        List<VolumeCapability> c = new ArrayList<>();
        for (String spec : line.all(Flag.CAP)) {
            c.add(CapabilityParser.parse(spec));
        }
        caps = List.copyOf(c);
        capacityRange = capacityRange(line);
        params = Values.keyValues(Flag.PARAMS, line.all(Flag.PARAMS));
        mutableParams = Values.keyValues(Flag.MUTABLE_PARAMS, line.all(Flag.MUTABLE_PARAMS));
        sourceVolumes = List.copyOf(line.all(Flag.SOURCE_VOLUME));
        snapshotIds = List.copyOf(line.all(Flag.SNAPSHOT_ID));
        volumeContext = Values.keyValues(Flag.VOL_CONTEXT, line.all(Flag.VOL_CONTEXT));
        publishContext = Values.keyValues(Flag.PUB_CONTEXT, line.all(Flag.PUB_CONTEXT));
        stagingTargetPath = text(line, Flag.STAGING_TARGET_PATH);
        targetPath = text(line, Flag.TARGET_PATH);
        readOnly = line.isOn(Flag.READ_ONLY);
        sourceVolume = text(line, Flag.SOURCE_VOLUME);
        sourceSnapshot = text(line, Flag.SOURCE_SNAPSHOT);
        snapshotId = text(line, Flag.SNAPSHOT_ID);
        maxEntries = line.has(Flag.MAX_ENTRIES) ? Values.nonNegativeInt(Flag.MAX_ENTRIES, line.last(Flag.MAX_ENTRIES)) : 0;
        startingToken = text(line, Flag.STARTING_TOKEN);
        paging = line.isOn(Flag.PAGING);
    }

    static Options of(CommandLine line, Map<String, String> env) throws UsageException {
        return new Options(line, env);
    }

    /** The single capability of a node or expand request; absent when no --cap was given. */
    Optional<VolumeCapability> singleCap() throws UsageException {
        if (caps.size() > 1) {
            throw new UsageException("--cap given " + caps.size() + " times; this verb sends one volume capability");
        }
        return caps.stream().findFirst();
    }

    private static Endpoint endpoint(String flag, String env) throws UsageException {
        String value = flag != null ? flag : env;
        if (value == null || value.isBlank()) {
            throw new UsageException("no endpoint: give --endpoint unix:///PATH|PATH|tcp://HOST:PORT or set CSI_ENDPOINT");
        }
        try {
            return Endpoint.parse(value);
        } catch (IllegalArgumentException e) {
            throw new UsageException((flag != null ? "--endpoint" : "CSI_ENDPOINT") + ": " + e.getMessage());
        }
    }

    private static boolean format(String f) throws UsageException {
        if (f == null) {
            return false;
        }
        if (f.equals("json")) {
            return true;
        }
        throw new UsageException("--format \"" + f + "\": only json is supported (csc's Go templates are not)");
    }

    /** Sent when either bound is given (even 0), so that what was typed is what the driver sees. */
    private static Optional<CapacityRange> capacityRange(CommandLine line) throws UsageException {
        if (!line.has(Flag.REQ_BYTES) && !line.has(Flag.LIM_BYTES)) {
            return Optional.empty();
        }
        CapacityRange.Builder r = CapacityRange.newBuilder();
        if (line.has(Flag.REQ_BYTES)) {
            r.setRequiredBytes(Values.bytes(Flag.REQ_BYTES, line.last(Flag.REQ_BYTES)));
        }
        if (line.has(Flag.LIM_BYTES)) {
            r.setLimitBytes(Values.bytes(Flag.LIM_BYTES, line.last(Flag.LIM_BYTES)));
        }
        return Optional.of(r.build());
    }

    private static String text(CommandLine line, Flag f) {
        String v = line.last(f);
        return v == null ? "" : v;
    }
}
