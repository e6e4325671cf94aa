package io.loopcsi.engine;

import static io.loopcsi.engine.Rig.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.loopcsi.engine.EngineException.Kind;

class MountFlagsTest {

    @Test
    void acceptsOrdinaryOptions() {
        List<String> ok = List.of("noatime", "uid=500", "gid=500", "nodiratime", "discard", "context=system_u:object_r:x:s0",
                "logbsize=256k", "ro");
        assertEquals(ok, MountFlags.validate(ok));
        assertEquals(List.of(), MountFlags.validate(List.of()));
    }

    @Test
    void rejectsSmuggledOptions() {
        for (String bad : new String[] {"ro,exec", "ro exec", "", ",", "noatime,", "a\nb", "-o", "=x", "uid=500,loop", "é"}) {
            EngineException e = expect(Kind.INVALID_ARGUMENT, () -> MountFlags.validate(List.of("noatime", bad)));
            assertTrue(e.getMessage().contains("mount_flags"), e.getMessage());
        }
    }

    @Test
    void rejectsOptionsThatChangeWhatIsMounted() {
        for (String bad : new String[] {"loop", "loop=/dev/loop0", "offset=0", "sizelimit=1", "bind", "rbind", "remount", "move",
                "x-systemd.foo", "X-mount.mkdir", "x-mount.subdir=a", "helper=foo", "user", "owner", "defaults"}) {
            expect(Kind.INVALID_ARGUMENT, () -> MountFlags.validate(List.of(bad)));
        }
    }

    @Test
    void rejectsMoreThanFourKiBInTotal() {
        List<String> flags = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            flags.add("opt" + i + "=" + "v".repeat(100)); // each valid on its own
        }
        EngineException e = expect(Kind.INVALID_ARGUMENT, () -> MountFlags.validate(flags));
        assertTrue(e.getMessage().contains("4 KiB"), e.getMessage());
        assertEquals(30, MountFlags.validate(flags.subList(0, 30)).size());
    }

    @Test
    void bindMountsGetOnlyPerMountFlagsAndRoWhenReadOnly() {
        assertEquals(List.of("ro", "noatime", "nosuid"), MountFlags.forBind(List.of("noatime", "uid=500", "nosuid"), true));
        assertEquals(List.of("noatime"), MountFlags.forBind(List.of("noatime", "uid=500"), false));
        assertEquals(List.of("ro"), MountFlags.forBind(List.of("ro"), true));
        assertEquals(List.of(), MountFlags.forBind(List.of("discard"), false));
    }
}
