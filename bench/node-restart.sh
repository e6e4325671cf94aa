#!/usr/bin/env bash
# BENCH_ONLY=node make bench: the node plugin's restart on a real kubelet (issue #25). Runs the
# e2e (.ci/e2e.sh: kube-testenv's kubelet + containerd node, the built image) with
# LOOPCSI_E2E_RESTART_ROUNDS=BENCH_NODE_ROUNDS (5): each round SIGKILLs the node container while a
# pod uses a volume and times kubelet's restart to the first Probe, then (but the last) deletes
# the pod and times its replacement, in parts (ProductOnNodeE2E.step3a/3b). Prints median, min
# and max of every part over the rounds; rows in target/bench/node-restart.json. Needs root, the
# e2e's ../shared/tools/kube-testenv, and no other kube-testenv node on the machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${BENCH_NODE_ROUNDS:-5}
mkdir -p target/bench
make -s image standin-images
log=target/bench/node-restart.log
echo "bench node: $rounds rounds of the node container killed and its pod replaced (e2e log: $log)"
if ! LOOPCSI_E2E_RESTART_ROUNDS=$rounds bash .ci/e2e.sh >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "bench node: the e2e failed (log above, whole log in $log)" >&2
  exit 1
fi
tsv=target/e2e/restart-timings.tsv
[ -s "$tsv" ] || { echo "bench node: no $tsv written" >&2; exit 1; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
# kind, part -> median, min, max (seconds) over its rounds, in the order the parts first appear
awk -F'\t' -v load="$load" '
  { key = $1 "\t" $3; if (!(key in n)) order[++k] = key; v[key, ++n[key]] = $4 }
  function median(key,   i, j, t, m, a) {
    m = n[key]; for (i = 1; i <= m; i++) a[i] = v[key, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    lo = a[1]; hi = a[m]
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    printf "%-16s %-48s %8s %8s %8s %3s\n", "node restart", "part (s from the kill / the delete)", "median", "min", "max", "n"
    json = "{\"load\": \"" load "\", \"rows\": ["
    for (i = 1; i <= k; i++) {
      split(order[i], f, "\t"); med = median(order[i])
      printf "%-16s %-48s %8.2f %8.2f %8.2f %3d\n", f[1], f[2], med, lo, hi, n[order[i]]
      json = json (i > 1 ? ", " : "") sprintf("{\"kind\": \"%s\", \"part\": \"%s\", \"median_s\": %.3f, \"min_s\": %.3f, \"max_s\": %.3f, \"n\": %d}", f[1], f[2], med, lo, hi, n[order[i]])
    }
    print json "]}" > "target/bench/node-restart.json"
    printf "load average at the end: %s\n", load
  }' "$tsv"
