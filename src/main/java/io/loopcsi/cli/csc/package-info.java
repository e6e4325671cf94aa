/**
 * {@code loopcsi csc}: a CSI client with GoCSI csc's verbs, flags and output, so that a csc
 * tutorial runs unchanged with {@code loopcsi csc} in place of {@code csc}.
 *
 * <h2>Shape</h2>
 * {@link io.loopcsi.cli.csc.Csc} is the entry point (plain {@code main}, no Quarkus, no CDI);
 * {@code CommandLine} splits words into positionals and {@code Flag}s, {@code Options} parses
 * every flag value before anything is sent ({@code CapabilityParser} for {@code --cap},
 * {@code Values} for the rest), {@code Verbs} finds the {@code Verb} (declared in
 * {@code IdentityVerbs}, {@code ControllerVerbs}, {@code GroupVerbs}, {@code NodeVerbs}), which builds requests, calls
 * the driver through {@code Connection} and prints through {@code Output} in {@code Lines}' formats.
 *
 * <h2>Output (text; {@code --format json} prints each response as one line of protobuf JSON)</h2>
 * Strings that may hold anything are quoted as Go's {@code %q}; maps print as {@code "k"="v"}
 * fields in key order; fields are tab-separated.
 * <ul>
 * <li>identity plugin-info: {@code "NAME"<TAB>"VERSION"[<TAB>"k"="v"...]} (manifest)</li>
 * <li>identity plugin-capabilities: one per line, the service type or the expansion type
 * ({@code CONTROLLER_SERVICE}, {@code ONLINE})</li>
 * <li>identity probe: {@code true} or {@code false}</li>
 * <li>controller create-volume, list-volumes: {@code "VOLUME_ID"<TAB>CAPACITY[<TAB>"k"="v"...]}
 * (volume context); list-volumes ends with {@code token="NEXT"} when there is a next page
 * (not with {@code --paging}, which fetches every page)</li>
 * <li>controller get-volume: the volume line, then {@code <TAB>abnormal=BOOL[<TAB>message="..."]}
 * when the driver reports a condition</li>
 * <li>controller validate-volume-capabilities: {@code "VOLUME_ID"<TAB>true}, or
 * {@code "VOLUME_ID"<TAB>false[<TAB>"MESSAGE"]}</li>
 * <li>controller get-capacity: available capacity in bytes; expand-volume, node expand: the new
 * capacity in bytes</li>
 * <li>controller create-snapshot, list-snapshots:
 * {@code "SNAPSHOT_ID"<TAB>SIZE<TAB>SOURCE_VOLUME_ID<TAB>CREATION_TIME<TAB>READY} (time in
 * RFC 3339, UTC), {@code token="NEXT"} as for volumes</li>
 * <li>controller get-capabilities, group get-capabilities, node get-capabilities: one RPC capability
 * name per line</li>
 * <li>group create-snapshot, get-snapshot: {@code "GROUP_SNAPSHOT_ID"<TAB>CREATION_TIME<TAB>READY},
 * then one snapshot line per member (as for create-snapshot)</li>
 * <li>delete-volume, delete-snapshot, modify-volume, group delete-snapshot, node stage, unstage,
 * publish, unpublish: the ID, once its call succeeded</li>
 * <li>node get-info: {@code NODE_ID<TAB>MAX_VOLUMES[<TAB>"segment"="value"...]} (topology)</li>
 * <li>node stats: {@code VOLUME_ID<TAB>VOLUME_PATH<TAB>AVAILABLE<TAB>TOTAL<TAB>USED<TAB>UNIT}, one
 * line per usage entry</li>
 * </ul>
 * Differences from csc: no trailing tab after volume context fields; node get-info prints the
 * topology as fields rather than a Go struct dump; node stats repeats ID and path on each usage
 * line; validate prints true/false rather than a Go struct; snapshot times are RFC 3339; csc's Go
 * templates ({@code --format TEMPLATE}) are not supported, {@code --format json} is.
 *
 * <h2>Start-up time</h2>
 * Wall time of {@code ./loopcsi csc identity plugin-info} against a local standalone driver,
 * JDK 17, 2 vCPUs shared with concurrent Maven builds (load average 6-9; a Java "hello world"
 * took 180-330 ms there), 20 runs each, median (min):
 * <ul>
 * <li>java -cp app + all of lib/main, default JVM flags: 2780 ms (2070)</li>
 * <li>launcher without the CDS archive (gRPC/netty/protobuf jars only, C1 only, serial GC,
 * no perf data): 1600 ms (1110)</li>
 * <li>launcher with the AppCDS archive: 770 ms (660); CPU time 660 ms vs 1940 ms for the first</li>
 * <li>for comparison, {@code ./loopcsi --help} through quarkus-run.jar (usage printed before Quarkus
 * starts): 480 ms (350)</li>
 * </ul>
 * Measured and left out: netty pooled-allocator/leak-detector properties and {@code -Xint} (no
 * clear gain); loading netty's epoll library from a fixed path instead of its per-run extraction
 * saves about 50 ms of CPU and is the next step if it matters.
 */
package io.loopcsi.cli.csc;
