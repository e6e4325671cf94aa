# loopcsi: `make run` serves the standalone driver, `make test` runs every test, `make bench` the benchmarks.
SHELL := /bin/bash
MVN := ./mvnw -B
ENDPOINT ?= unix://./run/csi.sock
DATA ?= ./data
CAPACITY ?= 20Gi
APP := target/quarkus-app/quarkus-run.jar
SOURCES := pom.xml $(shell find proto src/main -type f 2>/dev/null)

.PHONY: build run test test-kube manifests crds bundle demo bench native native-check clean

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
# OLM bundle olm-bundle/) from the code; `make test` fails while they differ.
manifests crds bundle:
	$(MVN) -q verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=GeneratedManifestsIT -Dloopcsi.update-manifests=true

demo: $(APP)
	bash src/main/sh/demo.sh $(ENDPOINT)

# Benchmarks (never part of `make test`): table on stdout, JSON in target/bench/results.json.
# Sizes: BENCH_STARTS=10 BENCH_CHURN=300 BENCH_LIFECYCLE=5 BENCH_VOLUMES=1000 ...; see docs/performance.md.
bench: $(APP)
	bash bench/run.sh

# Native executable (needs GraalVM/Mandrel); native-check analyses it where none is installed.
native:
	$(MVN) package -DskipTests -Dnative

native-check:
	bash ../shared/tools/native-check

clean:
	$(MVN) -q clean
