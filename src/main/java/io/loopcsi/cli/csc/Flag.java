package io.loopcsi.cli.csc;

import java.util.List;

/**
 * Every flag csc knows, with the names it is spelled by. Several csc versions spelled the same
 * request field differently ({@code --attribs} vs {@code --vol-context}, {@code --volume-src} vs
 * {@code --source-volume}); all spellings map to one flag here.
 */
enum Flag {
    ENDPOINT(true, "URL", "CSI endpoint: unix:///PATH, a PATH, or tcp://HOST:PORT (default $CSI_ENDPOINT)", "--endpoint", "-e"),
    TIMEOUT(true, "DURATION", "deadline of each RPC, e.g. 30s, 1m30s, 500ms (default 1m)", "--timeout", "-t"),
    FORMAT(true, "json", "print each response as protobuf JSON, one line per response", "--format"),
    HELP(false, null, "print usage", "--help", "-h"),
    CAP(true, "MODE,TYPE[,FSTYPE[,MNTFLAGS...]]",
            "volume capability, repeatable; MODE by name or number, TYPE block|mount|1|2", "--cap"),
    REQ_BYTES(true, "BYTES", "capacity_range.required_bytes (Ki/Mi/Gi/Ti suffixes allowed)", "--req-bytes"),
    LIM_BYTES(true, "BYTES", "capacity_range.limit_bytes (Ki/Mi/Gi/Ti suffixes allowed)", "--lim-bytes"),
    PARAMS(true, "K=V[,K=V...]", "parameters, repeatable", "--params"),
    MUTABLE_PARAMS(true, "K=V[,K=V...]", "mutable_parameters (provisioning=thin|thick, directIO=auto|on|off), repeatable",
            "--mutable-params"),
    VOL_CONTEXT(true, "K=V[,K=V...]", "volume_context, repeatable", "--vol-context", "--attribs"),
    PUB_CONTEXT(true, "K=V[,K=V...]", "publish_context, repeatable", "--pub-context", "--pub-info"),
    STAGING_TARGET_PATH(true, "PATH", "staging_target_path", "--staging-target-path"),
    TARGET_PATH(true, "PATH", "target_path", "--target-path"),
    READ_ONLY(false, null, "publish read-only", "--read-only"),
    SOURCE_VOLUME(true, "VOLUME_ID", "source volume (clone source, snapshot source, list filter; group create-snapshot: repeatable)",
            "--source-volume", "--volume-src", "--source-volume-id"),
    SOURCE_SNAPSHOT(true, "SNAPSHOT_ID", "create the volume from this snapshot", "--source-snapshot", "--snapshot-src"),
    SNAPSHOT_ID(true, "SNAPSHOT_ID", "list only this snapshot (group get-snapshot, delete-snapshot: a member, repeatable)", "--snapshot-id"),
    MAX_ENTRIES(true, "N", "max_entries of one page", "--max-entries"),
    STARTING_TOKEN(true, "TOKEN", "starting_token of the page to fetch", "--starting-token"),
    PAGING(false, null, "fetch every page, following next_token", "--paging");

    /** Flags every verb accepts. */
    static final List<Flag> GLOBAL = List.of(ENDPOINT, TIMEOUT, FORMAT, HELP);

    final boolean takesValue;
    final String valueName;
    final String help;
    final List<String> names;

    Flag(boolean takesValue, String valueName, String help, String... names) {
        this.takesValue = takesValue;
        this.valueName = valueName;
        this.help = help;
        this.names = List.of(names);
    }

    /** The canonical spelling, used in messages. */
    String canonical() {
        return names.get(0);
    }

    static Flag byName(String name) {
        for (Flag f : values()) {
            if (f.names.contains(name)) {
                return f;
            }
        }
        return null;
    }
}
