# loopcsi: `make run` serves the standalone driver, `make test` runs every test, `make bench` the benchmarks.
SHELL := /bin/bash
MVN := ./mvnw -B
ENDPOINT ?= unix://./run/csi.sock
DATA ?= ./data
CAPACITY ?= 20Gi
APP := target/quarkus-app/quarkus-run.jar
SOURCES := pom.xml $(shell find proto src/main -type f 2>/dev/null)

.PHONY: build run test demo bench native native-check clean

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
