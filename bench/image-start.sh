#!/usr/bin/env bash
# Start of the driver FROM THE IMAGE (`make image` first): `buildah run` of IMAGE (a container
# like a pod's: its own namespaces, the image's JVM) with `loopcsi standalone` on a unix socket
# bind-mounted from the host, timed from the buildah call to the first successful CSI Probe
# (asked with curl over HTTP/2 every 10 ms), with the image's class-data archive and without it
# (LOOPCSI_CDS=off), alternately, STARTS times each. Prints medians, min/max, and the JVM's CPU
# time (user + system) and RSS at the first Probe: on a busy machine the CPU time says more than
# the wall time. Needs root, buildah, curl, /dev/loop-control (bound into the container: the driver
# refuses a host without loop support). Not a test: numbers for docs/performance.md.
#
#   [JAVA_OPTS=...] bash bench/image-start.sh [IMAGE] [STARTS]      (JAVA_OPTS replaces the image's)
set -euo pipefail
image=${1:-ghcr.io/loopcsi/loopcsi:0.1.0}
starts=${2:-5}
work=$(mktemp -d /tmp/loopcsi-image-start.XXXXXX)
ctr=
cleanup() {
  [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
ctr=$(buildah from --pull=never "$image")
printf '\0\0\0\0\0' >"$work/probe.bin"

probe() { # probe SOCKET: Identity/Probe answered with grpc-status 0
  curl -s --max-time 1 --http2-prior-knowledge --unix-socket "$1" -H 'content-type: application/grpc' \
    -H 'te: trailers' --data-binary @"$work/probe.bin" -D - -o /dev/null http://localhost/csi.v1.Identity/Probe 2>/dev/null \
    | grep -qi '^grpc-status: 0'
}

one() { # one on|off -> "MS RSS_KIB CPU_MS"
  local sock=$work/sock/csi.sock
  rm -rf "$work/sock" && mkdir -p "$work/sock"
  local t0 t1 pid jvm rss cpu
  t0=$(date +%s%N)
  # the image's own JAVA_OPTS unless the caller sets one
  buildah run -v /dev/loop-control:/dev/loop-control --env LOOPCSI_CDS="$1" ${JAVA_OPTS+--env "JAVA_OPTS=$JAVA_OPTS"} -v "$work/sock:/run/loopcsi" "$ctr" -- \
    /opt/loopcsi/loopcsi standalone --endpoint unix:///run/loopcsi/csi.sock --data-dir /tmp/pool --capacity 1Gi \
    >"$work/log" 2>&1 &
  pid=$!
  until [ -S "$sock" ] && probe "$sock"; do
    kill -0 $pid 2>/dev/null || { cat "$work/log" >&2; echo "image-start: the driver died" >&2; exit 1; }
    sleep 0.01
  done
  t1=$(date +%s%N)
  jvm=$(pgrep -n -f 'quarkus-run.jar standalone --endpoint unix:///run/loopcsi/csi.sock')
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$jvm/status")
  # utime + stime (fields 14, 15 of /proc/PID/stat, after the parenthesised command) in ms
  cpu=$(sed 's/^.*) //' "/proc/$jvm/stat" | awk -v hz="$(getconf CLK_TCK)" '{ print int(($12 + $13) * 1000 / hz) }')
  kill -TERM "$jvm"
  wait $pid || true
  echo "$(((t1 - t0) / 1000000)) $rss $cpu"
}

stats() { # stats FILE LABEL
  sort -n "$1" | awk -v label="$2" '{ ms[NR] = $1; rss[NR] = $2; cpu[NR] = $3 }
    END { m = int((NR + 1) / 2); printf "%-26s first Probe median %5d ms (min %d, max %d), CPU %d ms, RSS %d MiB\n", label, ms[m], ms[1], ms[NR], cpu[m], rss[m] / 1024 }'
}

one on >/dev/null # warm the page cache: the first run reads the image from disk
for _ in $(seq "$starts"); do
  one on >>"$work/on"
  one off >>"$work/off"
done
echo "$image, $starts starts each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
stats "$work/on" "with app-cds.jsa"
stats "$work/off" "without (LOOPCSI_CDS=off)"
