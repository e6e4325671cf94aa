# loopcsi: `make run` serves the standalone driver, `make test` runs every test.
SHELL := /bin/bash
MVN := ./mvnw -B
ENDPOINT ?= unix://./run/csi.sock
DATA ?= ./data
CAPACITY ?= 20Gi
APP := target/quarkus-app/quarkus-run.jar
SOURCES := pom.xml $(shell find proto src/main -type f 2>/dev/null)

.PHONY: build run test test-kube manifests crds demo native native-check clean

build: $(APP)

$(APP): $(SOURCES)
	$(MVN) -q package -DskipTests
	@touch $(APP)

run: $(APP)
	@mkdir -p run
	@echo "loopcsi standalone: CSI on $(ENDPOINT), pool in $(DATA) ($(CAPACITY)). Stop with Ctrl-C."
	@echo "In another terminal:  ./loopcsi csc identity plugin-info --endpoint $(ENDPOINT)   (or: make demo)"
	./loopcsi standalone --endpoint $(ENDPOINT) --data-dir $(DATA) --capacity $(CAPACITY)

test:
	$(MVN) verify

# The same, with the operator's real-server tests against a throw-away kube-apiserver 1.20
# (../shared/tools/kube-testenv; what CI runs).
test-kube:
	bash .ci/kube-test.sh $(MVN) verify

# Rewrites the committed generated manifests (crds/, kubernetes/crds/, kubernetes/rbac.yaml)
# from the code; `make test` fails while they differ.
manifests crds:
	$(MVN) -q verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=GeneratedManifestsIT -Dloopcsi.update-manifests=true

demo: $(APP)
	bash src/main/sh/demo.sh $(ENDPOINT)

# Native executable (needs GraalVM/Mandrel); native-check analyses it where none is installed.
native:
	$(MVN) package -DskipTests -Dnative

native-check:
	bash ../shared/tools/native-check

clean:
	$(MVN) -q clean
