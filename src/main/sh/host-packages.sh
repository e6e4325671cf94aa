#!/usr/bin/env bash
# The host packages loopcsi's volume engine runs commands from (Debian/Ubuntu names; the same
# list as io.loopcsi.engine.HostRequirements, which the driver checks at start). Used by
# `make run` and by CI (.ci/run):
#
#   bash src/main/sh/host-packages.sh    installs what is missing when run as root on Debian/Ubuntu,
#                                        else says exactly what to install and exits 1
#   ... --test                           also what the tests run: prometheus (the server and promtool)
#   ... --bench                          also what `make bench` runs: fio
set -euo pipefail

packages=(xfsprogs e2fsprogs util-linux mount coreutils)
if [ "${1:-}" = --test ]; then packages+=(prometheus); fi
if [ "${1:-}" = --bench ]; then packages+=(fio); fi

missing=()
if command -v dpkg-query >/dev/null; then
  for p in "${packages[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
else
  # not Debian: look for the commands themselves
  commands=(losetup mount umount blkid blockdev fsfreeze fallocate mkfs.xfs xfs_growfs mkfs.ext4 resize2fs cp stat)
  if [ "${1:-}" = --test ]; then commands+=(prometheus promtool); fi
  if [ "${1:-}" = --bench ]; then commands+=(fio); fi
  for c in "${commands[@]}"; do
    command -v "$c" >/dev/null || PATH=$PATH:/sbin:/usr/sbin command -v "$c" >/dev/null || missing+=("$c")
  done
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "loopcsi: installing ${missing[*]}"
    apt-get update -q
    # policy-rc.d: a package's service (prometheus) is never started by its installation
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  elif command -v dpkg-query >/dev/null; then
    echo "loopcsi: missing packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  else
    echo "loopcsi: missing commands: ${missing[*]}; install your distribution's xfsprogs, e2fsprogs and util-linux" >&2
    exit 1
  fi
fi
# loop devices: the module may need loading on a fresh machine
if [ ! -e /dev/loop-control ]; then
  if [ "$(id -u)" = 0 ]; then modprobe loop || true; fi
  [ -e /dev/loop-control ] || { echo "loopcsi: no loop device support (/dev/loop-control): modprobe loop as root" >&2; exit 1; }
fi
