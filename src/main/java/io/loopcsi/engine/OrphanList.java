package io.loopcsi.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The node role's last disk audit, kept in the pool directory ({@code orphans.json}) so that
 * {@code loopcsi doctor --data-dir} lists it without the API: {@code unclaimed} are volume and
 * snapshot IDs whose files are in the pool but that no LoopVolume/LoopSnapshot names; {@code missing}
 * are the names of objects whose files are gone; {@code abandonedTransfers} are fetches from another node
 * (a partial image and its progress, described with their sizes) into a volume no LoopVolume names, which
 * the node deletes once no LoopTransfer authorises them (null in a list an older version wrote). Written atomically (temp file, fsync, rename) when it
 * changes; never read by the engine (the files themselves are the truth).
 *
 * @param since when the node process found this list (RFC 3339)
 */
// Jackson reads and writes it by reflection: the native executable needs its accessors and constructor
// registered (without, the node role fails with "No serializer found ... native image" and doctor cannot read it)
@RegisterForReflection
public record OrphanList(String pool, String node, String since, List<String> unclaimed, List<String> missing,
        List<String> abandonedTransfers) {

    public OrphanList {
        abandonedTransfers = abandonedTransfers == null ? List.of() : abandonedTransfers;
    }

    public OrphanList(String pool, String node, String since, List<String> unclaimed, List<String> missing) {
        this(pool, node, since, unclaimed, missing, List.of());
    }

    public static final String FILE = "orphans.json";
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    public boolean isEmpty() {
        return unclaimed.isEmpty() && missing.isEmpty() && abandonedTransfers.isEmpty();
    }

    public void write(Path poolDir) {
        Path target = poolDir.resolve(FILE);
        Path tmp = poolDir.resolve(FILE + ".tmp");
        try {
            Files.deleteIfExists(tmp);
            PoolModes.createPrivateFile(tmp);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(this));
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            PoolDirectory.rename(tmp, target);
        } catch (IOException e) {
            throw EngineException.internal("cannot write " + target + ": " + e.getMessage(), e);
        }
    }

    /** The list in the pool directory; empty when no node role ever wrote one there. */
    public static Optional<OrphanList> read(Path poolDir) throws IOException {
        try {
            return Optional.of(JSON.readValue(Files.readAllBytes(poolDir.resolve(FILE)), OrphanList.class));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }
}
