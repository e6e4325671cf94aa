#!/bin/sh
# The entrypoint of a sidecar STAND-IN (Dockerfile.standin). It does none of the sidecar's work
# (the e2e test does that), but it starts as the real release starts: with the flags and env the
# operator gave it, checked against what that release accepts (issue 21: the real csi-provisioner
# v2.1.2 exits without POD_NAMESPACE under --enable-capacity; an unknown flag makes any of them
# exit). /standin/flags lists the release's flags (from its -h output, shared/data/sidecars/help);
# /standin/requires has lines "FLAG VAR..." (with FLAG given, each VAR must be set). Without a
# flags file the release's contract is unknown here and nothing is checked (it says so).
echo "loopcsi stand-in for $STANDIN_FOR: does nothing, sleeps; args: $*"
if [ -s /standin/flags ]; then
  for a in "$@"; do
    case "$a" in
      -*) f=${a%%=*}; f=${f#-}; f=--${f#-}
          grep -qx -- "$f" /standin/flags || { echo "flag provided but not defined: $f ($STANDIN_FOR)" >&2; exit 2; } ;;
    esac
  done
  echo "stand-in: every flag is one $STANDIN_FOR has"
else
  echo "stand-in: the flags of $STANDIN_FOR are not known here; not checked"
fi
if [ -s /standin/requires ]; then
  while read -r flag vars; do
    for a in "$@"; do
      if [ "$a" = "$flag" ] || [ "${a%%=*}" = "$flag" ]; then
        for v in $vars; do
          eval "val=\${$v:-}"
          [ -n "$val" ] || { echo "F stand-in: need $vars env variables with $flag, $v is empty ($STANDIN_FOR)" >&2; exit 255; }
        done
      fi
    done
  done < /standin/requires
  echo "stand-in: the env $STANDIN_FOR needs is set"
fi
trap 'exit 0' TERM INT
sleep 2147483647 &
wait
