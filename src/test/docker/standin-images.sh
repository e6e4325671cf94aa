#!/usr/bin/env bash
# `make standin-images`: one stand-in image (Dockerfile.standin: busybox that only sleeps) per
# sidecar image the operator can name (every sidecar image literal under
# src/main/java/io/loopcsi/operator), each tagged with that exact name and written as a
# docker-archive tarball OUT_DIR/<name>_<tag>.tar for kube-testenv load-image. Needs root, buildah and
# Debian's busybox-static; no registry.
#
#   standin-images.sh OUT_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 64; }
out=$1
cd "$(dirname "$0")/../../.."
busybox=/bin/busybox
[ "$(id -u)" = 0 ] || { echo "standin-images: needs root (buildah storage)" >&2; exit 1; }
command -v buildah >/dev/null || { echo "standin-images: apt-get install buildah" >&2; exit 1; }
if [[ $(ldd "$busybox" 2>&1 || true) != *"not a dynamic"* ]]; then
  echo "standin-images: $busybox is not static: apt-get install busybox-static" >&2
  exit 1
fi
# every sidecar image literal, whole ("registry.k8s.io/sig-storage/csi-resizer:v1.14.0") or by
# name under the sig-storage registry (REGISTRY + "csi-resizer:v1.1.0")
mapfile -t names < <(grep -rhoE '"(registry\.k8s\.io/sig-storage/)?(csi-[a-z-]+|livenessprobe|snapshot-controller):v[0-9][0-9A-Za-z.-]*"' \
  src/main/java/io/loopcsi/operator | tr -d '"' | sed 's|^registry\.k8s\.io/sig-storage/||; s|^|registry.k8s.io/sig-storage/|' | sort -u)
[ ${#names[@]} -gt 0 ] || { echo "standin-images: no sidecar image names found" >&2; exit 1; }
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$busybox" "$ctx/busybox"
cp src/test/docker/Dockerfile.standin "$ctx/Dockerfile"
cp src/test/docker/standin-entrypoint.sh "$ctx/"
rm -rf "$out"
mkdir -p "$out"
# what each release accepts, from shared/data beside the clone (its -h output); where that is not
# there, the stand-in says it does not check
data=${SIDECAR_DATA:-../shared/data/sidecars}
for name in "${names[@]}"; do
  base=${name##*/}
  help="$data/help/${base/:/-}.txt"
  : >"$ctx/flags"
  : >"$ctx/requires"
  if [ -f "$help" ]; then
    sed -nE 's/^[[:space:]]+-{1,2}([a-z0-9_-]+).*/--\1/p' "$help" | sort -u >"$ctx/flags"
    # csi-provisioner v2.1 names the env its --enable-capacity needs in its -h (--capacity-ownerref-level)
    if grep -q 'POD_NAME and POD_NAMESPACE environment variables' "$help"; then
      echo "--enable-capacity POD_NAMESPACE POD_NAME" >"$ctx/requires"
    fi
  fi
  old=$(buildah inspect --type image --format '{{.FromImageID}}' "$name" 2>/dev/null || true)
  # no --layers: buildah 1.28's layer cache ignores a changed build arg in ENV/LABEL, and every
  # stand-in would say it stands in for the first name
  buildah bud --quiet --pull=never --build-arg "STANDIN_FOR=$name" -t "$name" -f "$ctx/Dockerfile" "$ctx" >/dev/null
  new=$(buildah inspect --type image --format '{{.FromImageID}}' "$name")
  if [ -n "$old" ] && [ "$old" != "$new" ] && [ -z "$(buildah images --noheading --format '{{.ID}} {{.Name}}' \
      | awk -v id="${old:0:12}" '$1 == id && $2 != "<none>"')" ]; then
    buildah rmi "$old" >/dev/null 2>&1 || true
  fi
  buildah push --quiet "$name" "docker-archive:$out/${base/:/_}.tar:$name" >/dev/null
  echo "$out/${base/:/_}.tar  $name (stand-in; $( [ -s "$ctx/flags" ] && echo "checks $(wc -l <"$ctx/flags") flags" || echo "flags not known")$( [ -s "$ctx/requires" ] && echo ", env: $(cat "$ctx/requires")"))"
done
