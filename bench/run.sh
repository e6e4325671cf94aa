#!/usr/bin/env bash
# `make bench`: compiles the harness (bench/src/main/java) against the packaged driver's class
# path and runs every benchmark. Table on stdout, JSON in target/bench/results.json.
# Sizes: BENCH_STARTS BENCH_CHURN BENCH_LIFECYCLE BENCH_VOLUMES BENCH_VOLUME_MIB BENCH_PAGE BENCH_IO_SECONDS BENCH_IO_MIB BENCH_IDLE_SECONDS,
# BENCH_TRANSFER_MIB BENCH_TRANSFER_ROUNDS BENCH_TRANSFER_WARM,
# BENCH_ONLY=startup,churn,lifecycle,scale,io,idle (the default), transfer, evacuate, node and image (only when named: the
# node-to-node transfer against cp --sparse=always, TransferBench.java; `loopcsi evacuate` of 5 volumes of 1 GiB
# half full between two node processes on kube-testenv, EvacuationBenchKubeIT run by failsafe; the node
# plugin's restart on a real kubelet, bench/node-restart.sh; the image's start to the first Probe on
# JDK 25 + AOT cache and JDK 17 + AppCDS, and its size, bench/image-start.sh, after make image
# image-jdk17), BENCH_JDK25=/path (or none), BENCH_TMP=/tmp.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# BENCH_APP: a saved target/quarkus-app to measure instead (e.g. the build before a change)
app=${BENCH_APP:-target/quarkus-app}
[ -f "$app/quarkus-run.jar" ] || { echo "bench: $app missing; run make build" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench: needs root (loop devices, mkfs, mount)" >&2; exit 1; }
case ",${BENCH_ONLY:-}," in
  *,node,*) bash bench/node-restart.sh ;;
esac
case ",${BENCH_ONLY:-}," in
  *,image,*) make -s image image-jdk17
    bash bench/image-start.sh "${BENCH_STARTS:-10}" ;;
esac
case ",${BENCH_ONLY:-}," in
  *,evacuate,*) rm -f target/bench/evacuate.txt
    LOOPCSI_BENCH_EVACUATE=1 bash .ci/kube-test.sh ./mvnw -B -q verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
      -Dit.test=EvacuationBenchKubeIT
    cat target/bench/evacuate.txt ;;
esac
# only the rows that run outside the harness were named: done
rest=$(tr ',' '\n' <<<"${BENCH_ONLY:-}" | grep -vx -e node -e image -e evacuate -e '' || true)
if [ -n "${BENCH_ONLY:-}" ] && [ -z "$rest" ]; then exit 0; fi
cp="$app/app/*:$app/lib/main/*:$app/lib/boot/*"
classes=target/bench/classes
rm -rf "$classes"
mkdir -p "$classes"
# the tests' kernel clean-up and CSI client come along as sources: one copy of each in the repo
javac -nowarn -d "$classes" -cp "$cp" $(find bench/src/main/java -name '*.java') \
  src/test/java/io/loopcsi/testing/KernelCleanup.java src/test/java/io/loopcsi/testing/CsiClient.java
exec java -XX:+UseSerialGC ${BENCH_JAVA_OPTS:-} -cp "$classes:$cp" -Dorg.jboss.logging.provider=jdk io.loopcsi.bench.Bench "$@"
