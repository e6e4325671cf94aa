# loopcsi: `make run` serves the standalone driver, `make test` runs every test, `make bench` the benchmarks,
# `make image` the container image, `make e2e` the product on a real kubelet.
SHELL := /bin/bash
MVN := ./mvnw -B
ENDPOINT ?= unix://./run/csi.sock
DATA ?= ./data
CAPACITY ?= 20Gi
APP := target/quarkus-app/quarkus-run.jar
SOURCES := pom.xml $(shell find proto src/main -type f -not -path 'src/main/docker/*' 2>/dev/null)
VERSION := $(shell sed -n 's:^  <version>\(.*\)</version>$$:\1:p' pom.xml | head -1)
# the image the manifests and the StoragePool defaults name (kubernetes/operator.yaml, operator/api/Images.java)
IMAGE ?= ghcr.io/loopcsi/loopcsi:$(VERSION)
IMAGE_TAR := target/loopcsi-image.tar
# the native image (src/main/docker/Dockerfile.native), the pool's default (operator/api/Images.java)
NATIVE_IMAGE ?= $(IMAGE)-native
NATIVE_IMAGE_TAR := target/loopcsi-native-image.tar
# the image's build of the application (the pom's `image` profile: Quarkus' legacy-jar)
IMAGE_APP := target/image-app/loopcsi-runner.jar

.PHONY: build run test test-kube test-native manifests crds bundle demo bench native native-check image image-jdk17 standin-images e2e clean

build: $(APP)

$(APP): $(SOURCES)
	$(MVN) -q package -DskipTests
	@touch $(APP)

run: $(APP)
	@bash src/main/sh/host-packages.sh
	@mkdir -p run
	@echo "loopcsi standalone: CSI on $(ENDPOINT), pool in $(DATA) ($(CAPACITY)). Stop with Ctrl-C."
	@echo "In another terminal:  ./loopcsi csc identity plugin-info --endpoint $(ENDPOINT)   (or: make demo)"
	./loopcsi standalone --endpoint $(ENDPOINT) --data-dir $(DATA) --capacity $(CAPACITY)

# Every test. With ../shared/tools/kube-testenv beside the clone (as in CI) the operator's
# real-server tests run against a throw-away kube-apiserver 1.20; without it they are skipped
# (and say so).
test:
	@bash src/main/sh/host-packages.sh --test
	@if [ -f "$${KUBE_TESTENV:-../shared/tools/kube-testenv}" ]; then bash .ci/kube-test.sh $(MVN) verify; \
	else echo "no ../shared/tools/kube-testenv: the operator's real-server tests will be skipped"; $(MVN) verify; fi

# The same, insisting on the real-server tests.
test-kube:
	@bash src/main/sh/host-packages.sh --test
	bash .ci/kube-test.sh $(MVN) verify

# Rewrites the committed generated manifests (crds/, kubernetes/crds/, kubernetes/rbac.yaml, the
# OLM bundle olm-bundle/, its catalog olm-catalog/, kubernetes/olm/ but its OperatorGroup) from the
# code; `make test` fails while they differ.
manifests crds bundle:
	$(MVN) -q verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=GeneratedManifestsIT -Dloopcsi.update-manifests=true

demo: $(APP)
	bash src/main/sh/demo.sh $(ENDPOINT)

# Benchmarks (never part of `make test`): table on stdout, JSON in target/bench/results.json.
# Sizes: BENCH_STARTS=10 BENCH_CHURN=300 BENCH_LIFECYCLE=5 BENCH_VOLUMES=1000 ...; see docs/performance.md.
bench: $(APP)
	@bash src/main/sh/host-packages.sh --bench
	bash bench/run.sh

# The native executable in target/native/ (./loopcsi runs it with LOOPCSI_RUNTIME=native). With
# GraalVM/Mandrel's native-image, or a running docker/podman engine (Quarkus then builds in its Mandrel builder image; a client without an engine does not count),
# the official build: ./mvnw package -Dnative. Otherwise ../shared/tools/native-check --link (this
# project's machines: GraalVM's image builder from Maven Central on Temurin 25, ~10-12 min, 7-8 GB;
# the executable needs the JDK libraries it leaves in target/native/lib/ beside it).
NATIVE_EXE := target/native/loopcsi-$(VERSION)-runner
NATIVE_CHECK ?= ../shared/tools/native-check
# GraalVM 25's relative code pointers (experimental there, hence the unlock): the image heap holds code
# addresses relative to the code base, so the dynamic linker applies 86k relocations at each start
# instead of 247k, and 5.5 MiB fewer pages of the image heap become the process's own (idle anonymous
# RSS 18.0 -> 12.5 MiB; docs/performance.md, "What a node costs"). Builders before 25 (Quarkus 3.27's
# default Mandrel 23.1 builder image) do not know the option: the official path passes it only to a
# native-image of 25 or later.
NATIVE_RELATIVE_CODE := -H:+UnlockExperimentalVMOptions -H:+RelativeCodePointers
native: $(NATIVE_EXE)

$(NATIVE_EXE): $(SOURCES)
	@if command -v native-image >/dev/null || docker info >/dev/null 2>&1 || podman info >/dev/null 2>&1; then \
	  extra=; if native-image --version 2>/dev/null | grep -Eq '(GraalVM|Mandrel)[^0-9]*(2[5-9]|[3-9][0-9])\.'; then \
	    extra="-Dquarkus.native.additional-build-args-append=$$(echo '$(NATIVE_RELATIVE_CODE)' | tr ' ' ,)"; fi; \
	  set -x; $(MVN) package -DskipTests -Dnative $$extra && rm -rf target/native && mkdir -p target/native \
	    && cp target/loopcsi-$(VERSION)-runner $@; \
	elif [ -f "$(NATIVE_CHECK)" ]; then set -x; \
	  NATIVE_CHECK_BUILDER_ARGS="$${NATIVE_CHECK_BUILDER_ARGS:-} $(NATIVE_RELATIVE_CODE)" bash "$(NATIVE_CHECK)" --link; \
	else echo "make native: needs GraalVM/Mandrel (native-image on PATH), docker/podman, or $(NATIVE_CHECK)" >&2; exit 1; fi
	@touch $@

# The CSI tests that start the packaged launcher (./loopcsi), against the native executable; with
# kube-testenv (../shared/tools) also the node and controller roles against a real API server.
NATIVE_ITS := LauncherMessagesIT,MemoryLimitIT,RoleFlagsIT,DoctorIT,ReliabilityIT,SecurityIT,PoolLockIT,EndpointIT,PrometheusScrapeIT,NativeRuntimeIT,PoolServesVolumesKubeIT,NodeLossAndOrphansKubeIT,EvacuateKubeIT
test-native: native
	@bash src/main/sh/host-packages.sh --test
	@if [ -f "$${KUBE_TESTENV:-../shared/tools/kube-testenv}" ]; then \
	  LOOPCSI_RUNTIME=native bash .ci/kube-test.sh $(MVN) verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='$(NATIVE_ITS)'; \
	else LOOPCSI_RUNTIME=native $(MVN) verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='$(NATIVE_ITS)'; fi

native-check:
	bash ../shared/tools/native-check

# The JVM image (src/main/docker/Dockerfile.jvm) and the native image (Dockerfile.native, after
# `make native`) built offline with buildah from a Debian base made by debootstrap (cached) and, for
# the JVM image, this machine's Temurin 25 as its JDK stage, each as a docker-archive tarball; root,
# apt-get install buildah debootstrap. With a registry, build the same Dockerfiles with docker/podman
# instead (README, "The image"). image-jdk17: the JVM image on OpenJDK 17, tagged $(IMAGE)-jdk17,
# for the benchmarks' comparison.
image: $(IMAGE_TAR) $(NATIVE_IMAGE_TAR)

$(IMAGE_APP): $(SOURCES)
	$(MVN) -q package -DskipTests -Pimage
	@touch $(IMAGE_APP)

$(IMAGE_TAR): $(IMAGE_APP) loopcsi src/main/docker/Dockerfile.jvm src/main/docker/offline-image.sh
	bash src/main/docker/offline-image.sh $(IMAGE) $@

# the native image: the native executable of `make native` (with its lib/) on a root filesystem of
# only the commands the roles run and their libraries
$(NATIVE_IMAGE_TAR): $(NATIVE_EXE) loopcsi src/main/docker/Dockerfile.native src/main/docker/offline-image.sh
	bash src/main/docker/offline-image.sh --native $(NATIVE_IMAGE) $@

image-jdk17: $(IMAGE_APP) loopcsi src/main/docker/Dockerfile.jvm src/main/docker/offline-image.sh
	LOOPCSI_IMAGE_JDK=/usr/lib/jvm/java-17-openjdk-amd64 bash src/main/docker/offline-image.sh $(IMAGE)-jdk17 target/loopcsi-image-jdk17.tar

# Stand-ins for the CSI sidecar images (busybox that sleeps, tagged with their names), for the e2e node.
standin-images:
	bash src/test/docker/standin-images.sh target/standin-images

# The product on a real kubelet and containerd (../shared/tools/kube-testenv up --with-node); not in `make test`.
e2e: image standin-images
	bash .ci/e2e.sh

clean:
	$(MVN) -q clean
