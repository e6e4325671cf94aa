#!/usr/bin/env bash
# Start of the driver FROM THE IMAGE (`make image` first): `buildah run` of IMAGE (a container
# like a pod's: its own namespaces, the image's JVM) with `loopcsi standalone` on a unix socket
# bind-mounted from the host, timed from the buildah call to the first successful CSI Probe
# (asked with curl over HTTP/2 every 10 ms), with the image's class-data archive and without it
# (LOOPCSI_CDS=off), alternately, STARTS times each. Prints medians, min/max and the JVM's RSS at
# the first Probe. Needs root, buildah, curl. Not a test: numbers for docs/performance.md.
#
#   bash bench/image-start.sh [IMAGE] [STARTS]
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

one() { # one on|off -> "MS RSS_KIB"
  local sock=$work/sock/csi.sock
  rm -rf "$work/sock" && mkdir -p "$work/sock"
  local t0 t1 pid jvm rss
  t0=$(date +%s%N)
  buildah run --env LOOPCSI_CDS="$1" -v "$work/sock:/run/loopcsi" "$ctr" -- \
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
  kill -TERM "$jvm"
  wait $pid || true
  echo "$(((t1 - t0) / 1000000)) $rss"
}

stats() { # stats FILE LABEL
  sort -n "$1" | awk -v label="$2" '{ ms[NR] = $1; rss[NR] = $2 }
    END { m = int((NR + 1) / 2); printf "%-22s first Probe median %5d ms (min %d, max %d), RSS %d MiB\n", label, ms[m], ms[1], ms[NR], rss[m] / 1024 }'
}

one on >/dev/null # warm the page cache: the first run reads the image from disk
for _ in $(seq "$starts"); do
  one on >>"$work/on"
  one off >>"$work/off"
done
echo "$image, $starts starts each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
stats "$work/on" "with app-cds.jsa"
stats "$work/off" "without (LOOPCSI_CDS=off)"
