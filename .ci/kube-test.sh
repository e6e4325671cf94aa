#!/usr/bin/env bash
# Runs a command (default: ./mvnw -B verify) with a throw-away Kubernetes API server for the
# operator's real-server tests: kube-testenv (etcd + kube-apiserver 1.20 + kube-controller-manager
# on loopback) from ../shared/tools, KUBECONFIG exported, LOOPCSI_KUBE_TEST=1; torn down on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
KT=${KUBE_TESTENV:-../shared/tools/kube-testenv}
if [ ! -f "$KT" ]; then
  echo "kube-test: $KT not found (expected ../shared beside the clone)" >&2
  exit 1
fi
bash "$KT" build                                   # cold only the first time on a machine
eval "$(bash "$KT" up --with-controller-manager)"
trap 'bash "$KT" down "$KUBE_TESTENV_DIR" || true' EXIT
# kubectl: the machine's, else the one kube-testenv cached beside the apiserver
if ! command -v kubectl >/dev/null; then
  eval "$(bash "$KT" env)"
  export PATH="$KUBE_TESTENV_BIN:$PATH"
fi
export LOOPCSI_KUBE_TEST=1
if [ $# -eq 0 ]; then set -- ./mvnw -B verify; fi
"$@"
