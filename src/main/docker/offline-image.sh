#!/usr/bin/env bash
# `make image`: builds src/main/docker/Dockerfile.jvm with buildah WITHOUT any image registry and
# writes it as a docker-archive tarball (docker load, podman load, kube-testenv load-image, ctr
# import all read it).
#
#   offline-image.sh IMAGE OUT.tar
#   offline-image.sh --native IMAGE OUT.tar     (src/main/docker/Dockerfile.native: the native image)
#
# The Dockerfile's public bases cannot be pulled here, so stand-ins are made for them:
# - BASE (debian:bookworm-slim): debootstrap --variant=minbase of the same suite from the mirror
#   this machine's apt uses, with the Dockerfile's PACKAGES installed by apt, committed as the local
#   image localhost/loopcsi-base:KEY, KEY a hash of suite, mirror and package list: that image in
#   buildah's storage is the cache (later builds only add the application layers);
# - TOOLS (debian:bookworm-slim + xfsprogs): the same with binutils and xfsprogs installed;
# - JDK (eclipse-temurin:25-jdk): that one with this machine's JDK in /opt/java/openjdk, on PATH
#   as in Temurin's images, as localhost/loopcsi-jdk:KEY (KEY: the base's and the JDK's release
#   file). The JDK is $LOOPCSI_IMAGE_JDK, default /usr/lib/jvm/temurin-25-jdk-amd64 (Temurin's
#   build, as in the public image); /usr/lib/jvm/java-17-openjdk-amd64 makes the JDK 17 variant
#   that `make image-jdk17` builds for the benchmarks.
# Then the SAME Dockerfile is built with --build-arg BASE=... TOOLS=... JDK=... --pull=never (its apt
# steps find the packages installed and do nothing), from the application as the pom's `image`
# profile packages it (target/image-app: built by `make image` first).
#
# Needs root, buildah and debootstrap (apt-get install buildah debootstrap). Lock, work dirs:
# ${LOOPCSI_IMAGE_CACHE:-/var/cache/loopcsi-image}. Timings go to stderr.
set -euo pipefail
native=0
if [ "${1:-}" = --native ]; then native=1; shift; fi
[ $# -eq 2 ] || { echo "usage: $0 [--native] IMAGE OUT.tar" >&2; exit 64; }
image=$1 out=$2
cd "$(dirname "$0")/../../.."
dockerfile=src/main/docker/Dockerfile.jvm
[ $native = 0 ] || dockerfile=src/main/docker/Dockerfile.native
suite=bookworm
cache=${LOOPCSI_IMAGE_CACHE:-/var/cache/loopcsi-image}

say() { echo "[image] $*" >&2; }
die() { echo "image: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, buildah storage)"
for tool in buildah debootstrap; do
  command -v "$tool" >/dev/null || die "$tool not found: apt-get install buildah debootstrap"
done
if [ $native = 1 ]; then
  compgen -G 'target/native/loopcsi-*-runner' >/dev/null || die "no native executable in target/native: make native"
else
  [ -f target/image-app/loopcsi-runner.jar ] || die "target/image-app not built: ./mvnw package -DskipTests -Pimage"
fi
jdk=
jdk_home=${LOOPCSI_IMAGE_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
if [ $native = 0 ]; then
  [ -x "$jdk_home/bin/jlink" ] && [ -f "$jdk_home/release" ] || die "no JDK with jlink in $jdk_home (LOOPCSI_IMAGE_JDK)"
fi
# crun refuses hosts with hybrid cgroups (v1 controllers beside a cgroup2 'unified' mount): "cgroups
# in hybrid mode not supported". Where buildah would pick it there, its RUN steps use runc instead.
if [ -z "${BUILDAH_RUNTIME:-}" ] && [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/memory ] \
  && [ "$(buildah info --format '{{.host.OCIRuntime}}' 2>/dev/null)" = crun ]; then
  command -v runc >/dev/null || die "buildah runs crun, which does not support this host's hybrid cgroups: apt-get install runc"
  export BUILDAH_RUNTIME=runc
  say "hybrid cgroups: buildah runs runc, not crun"
fi

packages=$(sed -n 's/^ARG PACKAGES="\(.*\)"$/\1/p' "$dockerfile")
[ -n "$packages" ] || die "no ARG PACKAGES=\"...\" line in $dockerfile"
# the Debian mirror of this machine's apt (deb822 .sources or one-line .list)
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { print $2; exit }')
[ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
  | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }')
[ -n "$mirror" ] || die "cannot find this machine's Debian mirror in /etc/apt/sources.list{,.d}"
# the base of the JDK stage (Temurin's JDK images have binutils, whose objcopy jlink --strip-debug
# runs) and of the TOOLS stage (xfsprogs)
aux_packages="binutils xfsprogs"

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9

# A root filesystem like debian:bookworm-slim's (no docs, man pages or locales) with the packages.
make_rootfs() { # make_rootfs DIR PACKAGES
  local packages=$2
  local root=$1/root
  say "debootstrap $suite from $mirror (about a minute)"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$1/debootstrap.log" 2>&1 \
    || { tail -20 "$1/debootstrap.log" >&2; die "debootstrap failed (log above)"; }
  cat >"$root/etc/dpkg/dpkg.cfg.d/excludes" <<'EOF'
# as in Debian's slim container images
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
  # apt inside uses this machine's sources and settings while installing; /proc for the packages' scripts
  rm -f "$root/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list "$root/etc/apt/sources.list.d/" 2>/dev/null || true
  if [ -f /etc/apt/sources.list ]; then cp /etc/apt/sources.list "$root/etc/apt/sources.list"; fi
  local conf
  for conf in /etc/apt/apt.conf.d/*; do
    if [ -f "$conf" ]; then cp "$conf" "$root/etc/apt/apt.conf.d/zz-host-${conf##*/}"; fi
  done
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  mount -t proc proc "$root/proc"
  say "apt-get install $packages"
  local rc=0
  { chroot "$root" apt-get update -q \
      && DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends $packages \
      && chroot "$root" apt-get clean; } >"$1/apt.log" 2>&1 || rc=$?
  umount "$root/proc"
  [ $rc = 0 ] || { tail -20 "$1/apt.log" >&2; die "apt-get in the base root filesystem failed (log above)"; }
  # leave Debian's own sources and no build-time settings behind
  rm -rf "$root"/etc/apt/apt.conf.d/zz-host-* "$root/usr/sbin/policy-rc.d" \
    "$root"/etc/apt/sources.list "$root"/etc/apt/sources.list.d/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
    "$root"/var/log/* "$root"/tmp/* "$root"/root/.bash_history
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/usr/share/lintian/*
}

# base_image PACKAGES: the name of the local base with them (made once, then cached by name)
base_image() {
  local packages=$1 base t t2
  base=localhost/loopcsi-base:$(printf '%s\n' "$suite" "$mirror" "$packages" | sha256sum | cut -c1-12)
  if buildah inspect --type image "$base" >/dev/null 2>&1; then
    say "base $base cached ($packages)"
    echo "$base"
    return
  fi
  t=$(now)
  work=$(mktemp -d "$cache/rootfs.XXXXXX")
  container=
  cleanup() {
    mountpoint -q "$work/root/proc" 2>/dev/null && umount "$work/root/proc"
    [ -n "$container" ] && buildah rm "$container" >/dev/null 2>&1
    rm -rf "$work"
  }
  trap cleanup EXIT
  make_rootfs "$work" "$packages"
  say "root filesystem ready in $(since "$t"): $(du -sh "$work/root" | cut -f1)"
  t2=$(now)
  container=$(buildah from scratch)
  mnt=$(buildah mount "$container")
  tar -C "$work/root" --numeric-owner --xattrs --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' -cf - . \
    | tar -C "$mnt" --numeric-owner --xattrs -xpf -
  buildah umount "$container" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
    --label "io.loopcsi.base.suite=$suite" --label "io.loopcsi.base.packages=$packages" \
    --label "org.opencontainers.image.description=Debian $suite (debootstrap minbase) with $packages: the offline stand-in for debian:$suite-slim + apt" \
    "$container" >/dev/null
  buildah commit --quiet --rm "$container" "$base" >/dev/null
  container=
  cleanup
  trap - EXIT
  say "base $base committed in $(since "$t2") (made in $(since "$t") in all)"
  echo "$base"
}

base=$(base_image "$packages")
aux_base=$(base_image "$aux_packages")

# The JDK stage's stand-in: the base with this machine's JDK where Temurin's image has it. Links
# are followed (Debian's JDK links its conf/ and cacerts into /etc); its sources are left out.
if [ $native = 0 ]; then
jdk_key=$(printf '%s\n' "$aux_base" "$(cat "$jdk_home/release")" | sha256sum | cut -c1-12)
jdk=localhost/loopcsi-jdk:$jdk_key
if buildah inspect --type image "$jdk" >/dev/null 2>&1; then
  say "JDK stage $jdk cached"
else
  t=$(now)
  container=$(buildah from --pull=never "$aux_base")
  trap 'buildah rm "$container" >/dev/null 2>&1' EXIT
  mnt=$(buildah mount "$container")
  mkdir -p "$mnt/opt/java/openjdk"
  tar -C "$jdk_home" --exclude=./lib/src.zip -chf - . | tar -C "$mnt/opt/java/openjdk" -xf -
  buildah umount "$container" >/dev/null
  buildah config --env JAVA_HOME=/opt/java/openjdk \
    --env PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --label "org.opencontainers.image.description=the offline stand-in for eclipse-temurin:N-jdk: $(sed -n 's/^IMPLEMENTOR_VERSION=//p; s/^JAVA_RUNTIME_VERSION=//p' "$jdk_home/release" | tr -d '"' | xargs)" \
    "$container"
  buildah commit --quiet --rm "$container" "$jdk" >/dev/null
  trap - EXIT
  say "JDK stage $jdk committed in $(since "$t") from $jdk_home"
fi
fi

t=$(now)
old=$(buildah inspect --type image --format '{{.FromImageID}}' "$image" 2>/dev/null || true)
version=$(sed -n 's/.*:\([^:/]*\)$/\1/p' <<<"$image")
version=${version%-native}
buildah bud --quiet --pull=never --layers --build-arg "BASE=$base" --build-arg "TOOLS=$aux_base" ${jdk:+--build-arg "JDK=$jdk"} \
  ${version:+--build-arg "VERSION=$version"} \
  -t "$image" -f "$dockerfile" . >/dev/null
say "built $image in $(since "$t")"
new=$(buildah inspect --type image --format '{{.FromImageID}}' "$image")
# the previous build of this tag, if it has no name left: drop it (layers others share stay)
if [ -n "$old" ] && [ "$old" != "$new" ] && [ -z "$(buildah images --noheading --format '{{.ID}} {{.Name}}' \
    | awk -v id="${old:0:12}" '$1 == id && $2 != "<none>"')" ]; then
  buildah rmi "$old" >/dev/null 2>&1 || true
fi

t=$(now)
mkdir -p "$(dirname "$out")"
rm -f "$out"
buildah push --quiet "$image" "docker-archive:$out:$image" >/dev/null
say "wrote $out ($(du -h "$out" | cut -f1)) in $(since "$t")"
