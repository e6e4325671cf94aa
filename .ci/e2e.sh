#!/usr/bin/env bash
# `make e2e` (after `make image standin-images`): the product on a real kubelet. Starts a
# kube-testenv node (kube-apiserver, controller-manager, scheduler, kubelet + containerd), loads
# target/loopcsi-image.tar, target/loopcsi-native-image.tar and the sidecar stand-ins into it, runs ProductOnNodeE2E, and tears it
# all down on exit, also when something failed: kube-testenv down (pods, containers, their mounts
# and loop devices under /var/lib/kubelet), then what the example pool's node plugin attached or
# mounted from its backing directory, and that directory if this run created it. On failure the
# cluster's state and every loopcsi log go to target/e2e/ first. Timings go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
KT=${KUBE_TESTENV:-../shared/tools/kube-testenv}
[ -f "$KT" ] || { echo "e2e: $KT not found (expected ../shared beside the clone)" >&2; exit 1; }
[ -f target/loopcsi-image.tar ] || { echo "e2e: target/loopcsi-image.tar missing: make image" >&2; exit 1; }
[ -f target/loopcsi-native-image.tar ] || { echo "e2e: target/loopcsi-native-image.tar missing: make image" >&2; exit 1; }
compgen -G 'target/standin-images/*.tar' >/dev/null || { echo "e2e: no stand-in images: make standin-images" >&2; exit 1; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
say() { echo "[e2e] $*"; }

# The example pool's backing directory is a hostPath on this machine: remember the first of its
# ancestors that does not exist yet, to remove what the run creates there.
# A run that was killed before its cleanup leaves that ancestor named in $created_marker.
backing=$(awk '$1 == "backingDir:" { print $2; exit }' kubernetes/examples/storagepool.yaml)
created_marker=/var/lib/loopcsi-e2e.created
created=

diagnostics() {
  mkdir -p target/e2e
  local f=target/e2e/diagnostics.txt pod
  {
    kubectl get nodes,storagepools,csidrivers,csinodes,storageclasses,pv,pvc -A -o wide
    kubectl get all -n loopcsi-system -o wide
    kubectl describe pods -n loopcsi-system
    kubectl get events -A --sort-by=.lastTimestamp
    for pod in $(kubectl get pods -n loopcsi-system -o name); do
      echo "=== logs $pod"
      kubectl logs -n loopcsi-system "$pod" --all-containers --prefix --tail=200
      kubectl logs -n loopcsi-system "$pod" --all-containers --prefix --tail=200 --previous 2>/dev/null || true
    done
  } >"$f" 2>&1 || true
  cp "$KUBE_TESTENV_DIR"/*.log target/e2e/ 2>/dev/null || true
  say "FAILED: cluster state and logs in $f (kube-testenv logs beside it)"
}

release_backing() { # unmount and detach whatever still uses files under the pool's backing dir
  [ -n "$backing" ] || return 0
  local root=${created:-$backing} mp dev file
  awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r mp; do
    umount -l "$mp" || true
  done
  # by inode: the kernel names a file attached inside a pod by the pod's (gone) mount, "/volumes/x.img"
  find "$root" -type f -print0 2>/dev/null | while IFS= read -r -d '' file; do
    losetup --list --noheadings --output NAME --associated "$file" 2>/dev/null | while read -r dev; do
      losetup -d "$dev" || true
    done
  done
  for dev in /sys/block/loop*; do
    file=$(cat "$dev/loop/backing_file" 2>/dev/null) || continue
    case $file in "$root"/*) losetup -d "/dev/${dev##*/}" || true ;; esac
  done
  if [ -n "$created" ]; then rm -rf "$created"; rm -f "$created_marker"; fi
}

release_service_route() { # the test's DNAT rules for the kubernetes Service, if its JVM died before deleting them
  command -v iptables >/dev/null || return 0
  local rules rule
  rules=$(iptables -w -t nat -S 2>/dev/null | grep -- '--comment "loopcsi e2e' | sed 's/^-A /-D /') || return 0
  while read -r rule; do
    eval "iptables -w -t nat $rule" || true
  done <<<"$rules"
}

cleanup() {
  local rc=$?
  trap - EXIT
  release_service_route || true
  if [ -n "${KUBE_TESTENV_DIR:-}" ]; then
    [ $rc = 0 ] || diagnostics
    local t
    t=$(now)
    bash "$KT" down "$KUBE_TESTENV_DIR" || rc=1
    say "kube-testenv down in $(since "$t")"
  fi
  # not while another run's node may still use the backing directory (the wait below gave up)
  [ -z "$ours" ] || release_backing
  exit $rc
}
ours=
trap cleanup EXIT

t=$(now)
bash "$KT" build --with-node                        # cold only the first time on a machine
say "kube-testenv build --with-node in $(since "$t")"
# One kube-testenv node per machine. A run that was killed (a CI job stopped at its time limit) leaves
# its node's directory and /var/lib/kubelet/kube-testenv.owner behind with no process alive; take
# that one down. A node whose processes still run belongs to another run: wait for it, then give up.
stale_node() { # prints the directory of the machine's kube-testenv node, if any; rc 1 when it is alive
  local o pidf
  [ -e /var/lib/kubelet/kube-testenv.owner ] || return 0
  o=$(cat /var/lib/kubelet/kube-testenv.owner)
  echo "$o"
  [ -d "$o" ] || return 0
  for pidf in "$o"/*.pid; do
    [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && return 1
  done
  return 0
}
waited=0
while ! owner=$(stale_node); do
  [ $waited -lt 900 ] || { echo "e2e: another run's kube-testenv node still runs from $owner after 15 min" >&2; exit 1; }
  [ $waited -gt 0 ] || say "another run's kube-testenv node runs from $owner: waiting for it (up to 15 min)"
  sleep 10; waited=$((waited + 10))
done
if [ -n "$owner" ]; then
  say "a killed run left a kube-testenv node in $owner (no process alive): taking it down"
  if [ -d "$owner" ]; then bash "$KT" down "$owner"; else
    # its directory is gone too: what kube-testenv's own message asks for, done here
    awk '$5 == "/var/lib/kubelet" || index($5, "/var/lib/kubelet/") == 1 { print $5 }' /proc/self/mountinfo |
      sort -r | while read -r mp; do umount -l "$mp" || true; done
    rm -rf /var/lib/kubelet
  fi
fi
if [ -f "$created_marker" ]; then
  created=$(cat "$created_marker")
  say "a killed run left $created behind: releasing and removing it"
  release_backing
fi
ours=1
created=
if [ -n "$backing" ] && [ ! -e "$backing" ]; then
  created=$backing
  while [ ! -e "$(dirname "$created")" ]; do created=$(dirname "$created"); done
  echo "$created" >"$created_marker"
fi
t=$(now)
# `eval "$(up)"` would hide up's failure (eval of nothing succeeds): take its output first
up_env=$(bash "$KT" up --with-node)
eval "$up_env"
say "kube-testenv up --with-node in $(since "$t")"
# kubectl: the machine's, else the one kube-testenv cached beside the apiserver
if ! command -v kubectl >/dev/null; then
  eval "$(bash "$KT" env)"
  export PATH="$KUBE_TESTENV_BIN:$PATH"
fi
t=$(now)
# the JVM image (the operator, the application pods) and the native image (the pool's components)
bash "$KT" load-image target/loopcsi-image.tar target/loopcsi-native-image.tar target/standin-images/*.tar >/dev/null
say "load-image of $(du -ch target/loopcsi-image.tar target/loopcsi-native-image.tar target/standin-images/*.tar | tail -1 | cut -f1) in $(since "$t")"

export LOOPCSI_E2E=1
t=$(now)
./mvnw -B test-compile failsafe:integration-test failsafe:verify -Dit.test=ProductOnNodeE2E
say "ProductOnNodeE2E in $(since "$t") (with the test compile)"
