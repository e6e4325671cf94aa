#!/usr/bin/env bash
# Start of the driver FROM THE IMAGE (`make image`, `make image-jdk17` first): `buildah run` of each
# IMAGE (a container like a pod's: its own namespaces, the image's JVM) with `loopcsi standalone`
# on a unix socket bind-mounted from the host, timed from the buildah call to the first successful
# CSI Probe (asked with curl over HTTP/2 every 10 ms), with the image's class-data archive and
# without it (LOOPCSI_CDS=off); every image and mode once per round, STARTS rounds. Prints per
# image and mode the median, min and max, the part of it from the container's process start
# (/proc start time: the launcher and the JVM, without buildah and runc), the JVM's CPU time (user
# + system) and RSS at the first Probe (on a busy machine CPU time says more than wall time), and
# each image's size; rows also in target/bench/image-start.json. Needs root, buildah, curl,
# /dev/loop-control (bound into the container: the driver refuses a host without loop support).
# Not a test: numbers for docs/performance.md (`BENCH_ONLY=image make bench` runs it).
#
#   [JAVA_OPTS=...] [MODES="on off"] bash bench/image-start.sh [STARTS] [IMAGE...]
#       (JAVA_OPTS replaces the images'; default images: ghcr.io/loopcsi/loopcsi:0.1.0 and its -jdk17 tag if built)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
starts=${1:-10}
shift || true
images=("$@")
if [ ${#images[@]} = 0 ]; then
  images=(ghcr.io/loopcsi/loopcsi:0.1.0)
  buildah inspect --type image ghcr.io/loopcsi/loopcsi:0.1.0-jdk17 >/dev/null 2>&1 && images+=(ghcr.io/loopcsi/loopcsi:0.1.0-jdk17)
fi
read -r -a modes <<<"${MODES:-on off}"
work=$(mktemp -d /tmp/loopcsi-image-start.XXXXXX)
ctrs=()
cleanup() {
  local c
  for c in "${ctrs[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for image in "${images[@]}"; do
  ctrs+=("$(buildah from --pull=never "$image")")
done
printf '\0\0\0\0\0' >"$work/probe.bin"
hz=$(getconf CLK_TCK)

probe() { # probe SOCKET: Identity/Probe answered with grpc-status 0
  curl -s --max-time 1 --http2-prior-knowledge --unix-socket "$1" -H 'content-type: application/grpc' \
    -H 'te: trailers' --data-binary @"$work/probe.bin" -D - -o /dev/null http://localhost/csi.v1.Identity/Probe 2>/dev/null \
    | grep -qi '^grpc-status: 0'
}

one() { # one CONTAINER on|off -> "MS PROCESS_MS RSS_KIB CPU_MS"
  local sock=$work/sock/csi.sock
  rm -rf "$work/sock" && mkdir -p "$work/sock"
  local t0 t1 up pid jvm rss cpu start
  t0=$(date +%s%N)
  # the image's own JAVA_OPTS unless the caller sets one
  buildah run -v /dev/loop-control:/dev/loop-control --env LOOPCSI_CDS="$2" ${JAVA_OPTS+--env "JAVA_OPTS=$JAVA_OPTS"} -v "$work/sock:/run/loopcsi" "$1" -- \
    /opt/loopcsi/loopcsi standalone --endpoint unix:///run/loopcsi/csi.sock --data-dir /tmp/pool --capacity 1Gi \
    >"$work/log" 2>&1 &
  pid=$!
  until [ -S "$sock" ] && probe "$sock"; do
    kill -0 $pid 2>/dev/null || { cat "$work/log" >&2; echo "image-start: the driver died" >&2; exit 1; }
    sleep 0.01
  done
  t1=$(date +%s%N)
  up=$(cut -d' ' -f1 /proc/uptime)
  # the launcher execs the JVM: one process, started when runc started the container's command
  jvm=$(pgrep -n -f '\.jar standalone --endpoint unix:///run/loopcsi/csi.sock')
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$jvm/status")
  # utime + stime, start time (fields 14, 15, 22 of /proc/PID/stat, after the parenthesised command)
  read -r cpu start < <(sed 's/^.*) //' "/proc/$jvm/stat" | awk -v hz="$hz" '{ print int(($12 + $13) * 1000 / hz), $20 }')
  kill -TERM "$jvm"
  wait $pid || true
  echo "$(((t1 - t0) / 1000000)) $(awk -v up="$up" -v s="$start" -v hz="$hz" 'BEGIN { printf "%d", (up - s / hz) * 1000 }') $rss $cpu"
}

stats() { # stats FILE IMAGE MODE: a line on stdout, a JSON row in FILE.json
  sort -n "$1" | awk -v image="$2" -v mode="$3" -v json="$1.json" '{ ms[NR] = $1; proc[NR] = $2; rss[NR] = $3; cpu[NR] = $4 }
    function med(a,   i, j, t, b) { for (i = 1; i <= NR; i++) b[i] = a[i]
      for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
      return NR % 2 ? b[(NR + 1) / 2] : (b[NR / 2] + b[NR / 2 + 1]) / 2 }
    END { printf "%-40s %-4s first Probe median %5d ms (min %d, max %d), from the process %d ms, CPU %d ms, RSS %d MiB\n",
            image, mode, med(ms), ms[1], ms[NR], med(proc), med(cpu), med(rss) / 1024
          printf "{\"image\": \"%s\", \"archive\": \"%s\", \"starts\": %d, \"median_ms\": %d, \"min_ms\": %d, \"max_ms\": %d, \"process_median_ms\": %d, \"cpu_median_ms\": %d, \"rss_median_mib\": %d}\n",
            image, mode, NR, med(ms), ms[1], ms[NR], med(proc), med(cpu), med(rss) / 1024 > json }'
}

echo "image start: ${#images[@]} image(s), modes ${modes[*]}, $starts rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!images[@]}"; do
  one "${ctrs[$i]}" on >/dev/null # warm the page cache: the first run reads the image from disk
done
t=$(date +%s%N)
buildah run "${ctrs[0]}" -- /bin/true
echo "buildah run of /bin/true (the container runtime's own part): $((($(date +%s%N) - t) / 1000000)) ms"
for _ in $(seq "$starts"); do
  for i in "${!images[@]}"; do
    for m in "${modes[@]}"; do
      one "${ctrs[$i]}" "$m" >>"$work/$i.$m"
    done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for i in "${!images[@]}"; do
  for m in "${modes[@]}"; do
    stats "$work/$i.$m" "${images[$i]}" "$m"
    rows+=("$(cat "$work/$i.$m.json")")
  done
  # the image's size: its layers uncompressed, as `docker images` and `buildah images` show it
  echo "${images[$i]}: $(buildah images --format '{{.Size}}' "${images[$i]}" | head -1)"
done
mkdir -p target/bench
{
  printf '{"load": "%s", "rows": [' "$(cut -d' ' -f1-3 /proc/loadavg)"
  (IFS=,; printf '%s' "${rows[*]}")
  printf '], "sizes": {'
  for i in "${!images[@]}"; do
    [ "$i" = 0 ] || printf ', '
    printf '"%s": "%s"' "${images[$i]}" "$(buildah images --format '{{.Size}}' "${images[$i]}" | head -1)"
  done
  printf '}}\n'
} >target/bench/image-start.json
