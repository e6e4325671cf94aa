#!/usr/bin/env bash
# Start to first Probe and idle RSS of the standalone driver through ./loopcsi, native
# (LOOPCSI_RUNTIME=native, after `make native`) and JVM (after `make build`), RUNS each, interleaved.
# The RSS is split as the kernel counts it (/proc/PID/smaps_rollup): anonymous (heap, stacks, malloc:
# the process's own) and file-backed (pages of the executable, its libraries and the JVM's class
# archives: page cache, clean, shared by every process that maps the same file on the node).
# The client is the native executable's csc, polled (its own start: a few ms). Needs root.
#   bash bench/native-start.sh [RUNS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-5}
now() { date +%s%N; }
probe() { LOOPCSI_RUNTIME=native ./loopcsi csc identity probe --endpoint "unix://$1" >/dev/null 2>&1; }
one() { # one RUNTIME: prints "ms rss_mib anon_mib file_mib"
  local d pid t0 ms rss
  d=$(mktemp -d /tmp/loopcsi-start.XXXXXX)
  t0=$(now)
  LOOPCSI_RUNTIME=$1 ./loopcsi standalone --endpoint "unix://$d/csi.sock" --data-dir "$d/data" --capacity 1Gi >"$d/log" 2>&1 &
  pid=$!
  until probe "$d/csi.sock"; do kill -0 $pid 2>/dev/null || { cat "$d/log" >&2; return 1; }; done
  ms=$((($(now) - t0) / 1000000))
  sleep 5
  rss=$(awk '/^Rss:/ { r = $2 } /^Pss_Anon:/ { a = $2 } /^Pss_File:/ { f = $2 }
    END { printf "%.1f %.1f %.1f", r / 1024, a / 1024, f / 1024 }' /proc/$pid/smaps_rollup)
  kill -TERM $pid; wait $pid 2>/dev/null || true
  rm -rf "$d"
  echo "$ms $rss"
}
# Relocations the dynamic linker applies to the executable at each start (fewer with GraalVM 25's relative
# code pointers, see the Makefile's NATIVE_RELATIVE_CODE): each pointer it writes dirties a page of the
# image heap, which is then the process's own memory.
for f in target/native/loopcsi-*-runner; do
  command -v readelf >/dev/null && [ -x "$f" ] &&
    echo "native: $(readelf -r "$f" | grep -c R_X86_64_RELATIVE) relocations applied at start, executable $(($(stat -c %s "$f") / 1048576)) MiB" >&2
done
for i in $(seq "$runs"); do
  for r in native jvm; do
    echo "$r $(one $r)"
  done
done | tee /dev/stderr | awk '{ n[$1]++; ms[$1, n[$1]] = $2; rss[$1, n[$1]] = $3 " (" $4 " anon + " $5 " file)" }
  END { for (r in n) { printf "%s: start to first Probe ms:", r; for (i = 1; i <= n[r]; i++) printf " %s", ms[r, i];
    printf "; idle RSS MiB:"; for (i = 1; i <= n[r]; i++) printf " %s", rss[r, i]; printf "\n" } }'
