#!/usr/bin/env bash
# The csc tutorial against a running driver, with `loopcsi csc` in place of csc:
# identity and node info, a block and an xfs volume created, validated, staged, published,
# written to, measured, then unpublished, unstaged and deleted. Each command is printed before
# it runs. Node calls act on this machine, so the driver must run here (as root).
#
#   bash src/main/sh/demo.sh [ENDPOINT]    (default: $CSI_ENDPOINT, else unix://./run/csi.sock)
#   make demo                              (the endpoint `make run` serves)
#
# Whatever the demo made is released on exit, also when a step fails or on Ctrl-C.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export CSI_ENDPOINT=${1:-${CSI_ENDPOINT:-unix://./run/csi.sock}}
tmp=$(mktemp -d /tmp/loopcsi-demo.XXXXXX)
block="" xfs=""

# csc ARGS...: prints the command, runs it; its output is also left in $out
csc() {
  printf '\n$ loopcsi csc %s\n' "$*"
  out=$("$root/loopcsi" csc "$@")
  [ -z "$out" ] || printf '%s\n' "$out"
}

# the volume ID of a create-volume line: "<id>"<TAB><capacity>
volume_id() {
  cut -f1 <<<"$out" | tr -d '"'
}

cleanup() {
  local rc=$?
  set +e
  if [ -n "$xfs$block" ]; then
    echo; echo "cleaning up: a step failed or the demo was interrupted"
  fi
  if [ -n "$xfs" ]; then
    "$root/loopcsi" csc node unpublish "$xfs" --target-path "$tmp/xfs-target" >/dev/null
    "$root/loopcsi" csc node unstage "$xfs" --staging-target-path "$tmp/xfs-staging" >/dev/null
    "$root/loopcsi" csc controller delete-volume "$xfs" >/dev/null
  fi
  if [ -n "$block" ]; then
    "$root/loopcsi" csc node unpublish "$block" --target-path "$tmp/block-target" >/dev/null
    "$root/loopcsi" csc node unstage "$block" --staging-target-path "$tmp/block-staging" >/dev/null
    "$root/loopcsi" csc controller delete-volume "$block" >/dev/null
  fi
  # never reaches into a mount that could not be released
  rm -rf --one-file-system "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "CSI endpoint: $CSI_ENDPOINT (staging and target paths under $tmp)"

csc identity plugin-info
csc identity plugin-capabilities
csc identity probe
csc node get-info

csc controller create-volume "demo-block-$$" --cap 1,block --req-bytes 16Mi
block=$(volume_id)
csc controller create-volume "demo-xfs-$$" --cap SINGLE_NODE_WRITER,mount,xfs --req-bytes 300Mi
xfs=$(volume_id)
csc controller validate-volume-capabilities "$block" --cap 1,block
csc controller validate-volume-capabilities "$xfs" --cap SINGLE_NODE_WRITER,mount,xfs
csc controller list-volumes

csc node stage "$xfs" --staging-target-path "$tmp/xfs-staging" --cap SINGLE_NODE_WRITER,mount,xfs
csc node publish "$xfs" --staging-target-path "$tmp/xfs-staging" --target-path "$tmp/xfs-target" \
  --cap SINGLE_NODE_WRITER,mount,xfs
printf '\n$ echo "hello from loopcsi" > %s/hello.txt; cat %s/hello.txt\n' "$tmp/xfs-target" "$tmp/xfs-target"
echo "hello from loopcsi" >"$tmp/xfs-target/hello.txt"
cat "$tmp/xfs-target/hello.txt"
csc node stats "$xfs:$tmp/xfs-target"

csc node stage "$block" --staging-target-path "$tmp/block-staging" --cap 1,block
csc node publish "$block" --staging-target-path "$tmp/block-staging" --target-path "$tmp/block-target" --cap 1,block
printf '\n$ blockdev --getsize64 %s\n' "$tmp/block-target"
blockdev --getsize64 "$tmp/block-target"

csc node unpublish "$xfs" --target-path "$tmp/xfs-target"
csc node unstage "$xfs" --staging-target-path "$tmp/xfs-staging"
csc node unpublish "$block" --target-path "$tmp/block-target"
csc node unstage "$block" --staging-target-path "$tmp/block-staging"
csc controller delete-volume "$xfs" "$block"
xfs="" block=""

echo; echo "demo done: every volume, mount and loop device it made is gone"
