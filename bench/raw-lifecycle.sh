#!/usr/bin/env bash
# The kernel work of one xfs volume lifecycle, as raw commands: what the driver orders for
# CreateVolume, NodeStage, NodePublish, (a 16 MiB write), NodeUnpublish, NodeUnstage, DeleteVolume.
# Usage: raw-lifecycle.sh DIR [SIZE] [WRITE_MIB]. Prints "step ms" lines and "total ms" (timed in-shell,
# bash start excluded). Releases what it made even on failure.
set -euo pipefail
dir=$1
size=${2:-1G}
write_mib=${3:-16}
img=$dir/img
staging=$dir/staging
target=$dir/target
mkdir -p "$dir" "$staging" "$target"
dev=
cleanup() {
  mountpoint -q "$target" && umount "$target" || true
  mountpoint -q "$staging" && umount "$staging" || true
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
  rm -f "$img"
}
trap cleanup EXIT
now() { local t=${EPOCHREALTIME/./}; echo "${t}"; }
start=$(now); last=$start
step() { local t; t=$(now); printf '%s %d.%03d\n' "$1" $(((t - last) / 1000)) $(((t - last) % 1000)); last=$t; }
truncate -s "$size" "$img"; step create
dev=$(losetup --find --show --direct-io=on "$img")
mkfs.xfs -q "$dev"
mount -t xfs -o nouuid "$dev" "$staging"; step stage
mount --bind "$staging" "$target"; step publish
dd if=/dev/zero of="$target/data" bs=1M count="$write_mib" conv=fsync status=none; step write
umount "$target"; step unpublish
umount "$staging"
losetup -d "$dev"; dev=; step unstage
rm -f "$img"; step delete
end=$(now)
printf 'total %d.%03d\n' $(((end - start) / 1000)) $(((end - start) % 1000))
