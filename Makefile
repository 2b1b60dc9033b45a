# flinkfsm — see README.md. Kubernetes binaries for the local cluster are built once into
# $(FLINKFSM_CACHE) (default ~/.cache/flinkfsm) and reused.
SHELL := /bin/bash
export GOFLAGS ?= -buildvcs=false
export GOTOOLCHAIN ?= local

GENERATED := pkg/apis/app/v1beta1/zz_generated.deepcopy.go pkg/client deploy/crd docs/state-machine.md deploy/policy.yaml deploy/helm/flinkfsm/crds deploy/helm/flinkfsm/files
UNIT_PKGS = $(shell go list ./... | grep -v -e /integ/e2e -e /integ/lyftcompat -e /integ/portable)
export FLINKFSM_REQUIRE_CLUSTER ?= 1

.PHONY: release all build generate verify test unit integ integ-external bench bench-soak bench-autoscaler performance-doc demo cluster-up cluster-down k8s-binaries helm helm-template clean install-plugin fuzz flink-dist flinkjob test-flink flink-smoke

all: build

build:
	go build -o bin/flinkfsm ./cmd/flinkfsm
	go build -o bin/kubectl-flink ./cmd/kubectl-flink

# release cross-compiles kubectl-flink for Linux, macOS and Windows into dist/ with checksums and a
# krew manifest: `make release VERSION=v0.3.0`.
release:
	@test -n "$(VERSION)" || { echo "make release VERSION=vX.Y.Z"; exit 2; }
	go run ./hack/release -version $(VERSION) -out dist

# install-plugin puts kubectl-flink on PATH (in $(GOBIN), or $(GOPATH)/bin), where kubectl finds it as `kubectl flink`.
install-plugin:
	go install ./cmd/kubectl-flink

# fuzz runs each fuzz target for FUZZTIME (their seed corpus runs with every `make test`), then the
# randomized explorer of the unit world (pkg/controller/flinkapplication/explorer_test.go) in
# EXPLORER_PROCS processes (one per core by default), each seed after seed from seeds of its own,
# EXPLORER_STEPS steps each (a step is a user action, a fault or a reconcile pass), until
# EXPLORER_TOTAL_STEPS steps in all or EXPLORER_DURATION_SECONDS (0: no limit) (hack/explore.sh).
# It prints the steps run and every violation with the seed that replays it. At about 1,600 steps a
# second on two cores, 10 million steps take under two hours: EXPLORER_DURATION_SECONDS=3600 for one.
FUZZTIME ?= 1m
EXPLORER_SEED ?= 10000000
EXPLORER_STEPS ?= 5000
EXPLORER_TOTAL_STEPS ?= 10000000
EXPLORER_DURATION_SECONDS ?= 0
fuzz:
	@for t in $$(go test -list '^Fuzz' ./pkg/controller/flink/ | grep ^Fuzz); do \
		echo "== $$t"; go test -run XXX -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./pkg/controller/flink/ || exit 1; done
	@echo "== explorer"
	EXPLORER_SEED=$(EXPLORER_SEED) EXPLORER_STEPS=$(EXPLORER_STEPS) EXPLORER_TOTAL_STEPS=$(EXPLORER_TOTAL_STEPS) \
		EXPLORER_DURATION_SECONDS=$(EXPLORER_DURATION_SECONDS) ./hack/explore.sh

generate:
	./hack/update-codegen.sh

# verify fails when generated files are stale, gofmt would change a file, or go vet complains, when
# a relative link in README.md or docs/ resolves to no file or heading or docs/README.md does not
# list a document (hack/doclinks), and when the Helm chart fails helm lint or renders another
# operator than deploy/ (deploy/helmtest).
verify: k8s-binaries helm
	@./hack/verify.sh

unit: k8s-binaries helm
	go test -count=1 -timeout 20m $(UNIT_PKGS)

# The integration suites run the real operator against a real local API server: integ/e2e,
# integ/lyftcompat (the Lyft operator's own integration scenarios) and integ/portable (the part that
# also runs against an existing cluster), one after the other: each starts its own local cluster.
integ: k8s-binaries helm
	go test -count=1 -timeout 30m ./integ/e2e/...
	go test -count=1 -timeout 15m ./integ/lyftcompat/...
	go test -count=1 -timeout 10m ./integ/portable/...

# integ-external runs the portable suite against the cluster of $KUBECONFIG (a kind cluster with
# real Flink), installing the operator from the chart: see docs/testing.md for the recipe and the
# FLINKFSM_* variables. EXTERNAL_PARALLEL bounds how many tests (each a Flink cluster of about
# 3 GiB, two during an update) run at once.
EXTERNAL_PARALLEL ?= 2
integ-external: helm
	FLINKFSM_EXTERNAL=1 go test -count=1 -timeout 60m -parallel $(EXTERNAL_PARALLEL) -v ./integ/portable/...

test: unit integ flink-smoke

# The benchmark on the local cluster (docs/performance.md; not part of `make test`; the autoscaler's, which
# needs no cluster, is `make bench-autoscaler` below): `make bench N=1000`,
# BENCH_STEADY=3m the steady-state window, BENCH_FLAGS more flags (go run ./integ/cmd/bench -h).
# Prints a table against the targets and writes JSON. N=1000 takes about 12 minutes on 2 cores,
# plus what the group with periodic savepoints adds to (c): -savepointing-fraction 0.1 (a tenth of N
# more applications; 0 for none) take one every -savepoint-interval-seconds 600 and are measured for
# at least that long (BENCH_FLAGS="-savepoint-interval-seconds 60" for a quick run), against the
# target of 2 owner writes and 2 FlinkSnapshot writes (and write requests) per savepoint and no other;
# -savepoint-keep K sets their savepointRetention.keep, so that a short window sees retention's deletes.
# -checkpointing-fraction 0.5 makes every other application of the fleet checkpoint every 10 s, as
# a large fleet does at N=10000 (docs/performance.md, "Running it": the command, and what it takes); the
# local cluster is sized for the run's N (-size-for sizes it for more). -floor-from FILE takes (b)'s
# floor from an earlier run's JSON results (its -out) of the same size instead of measuring it, and
# runs the operator's run alone (at N=10000 the floor and its cleanup took 47 to 90 minutes).
# -steady-again NAME[:KEY=VALUE,...] (repeatable) restarts the operator after (f) with KEY=VALUE in its
# environment (binary=PATH: another operator binary) and measures (c)'s window again, each variant in
# turn, on the same fleet: settings compared where two whole runs differ more than they do.
# Its last part is the soak, SOAK_N ordinary applications (100, whatever N) alone and beside
# thirteen hostile tenants; BENCH_SOAK=false leaves it out, and `make bench-soak` runs only the soak (its
# JSON in SOAK_OUT).
N ?= 100
SOAK_N ?= 100
BENCH_SOAK ?= true
BENCH_STEADY ?= 3m
BENCH_OUT ?= bench-results.json
SOAK_OUT ?= bench-results-soak.json
bench: k8s-binaries
	go run ./integ/cmd/bench -n $(N) -steady $(BENCH_STEADY) -soak=$(BENCH_SOAK) -soak-n $(SOAK_N) -out $(BENCH_OUT) $(BENCH_FLAGS)

bench-soak: k8s-binaries
	go run ./integ/cmd/bench -soak-only -soak-n $(SOAK_N) -out $(SOAK_OUT) $(BENCH_FLAGS)

# The autoscaler benchmark (not part of `make test`; docs/performance.md, "Autoscaler"): the operator's
# own passes drive a simulated four-vertex job on a fake clock through a load step (6 h) and a daily
# wave (24 h), each applied in place and by restart, in about a minute and without a cluster. It
# prints a table per run and writes JSON, with every probe of the job, to AS_BENCH_OUT.
# AS_BENCH_FLAGS adds flags: -as.scenarios step, -as.variants in-place, -as.hours 3 (only the first
# hours of each scenario).
AS_BENCH_OUT ?= bench-results-autoscaler.json
bench-autoscaler:
	go test -tags autoscalerbench -run '^TestAutoscalerBenchmark$$' -count=1 -v -timeout 30m ./pkg/controller/flinkapplication \
		-args -as.out $(abspath $(AS_BENCH_OUT)) -as.commit "$$(git rev-parse --short HEAD)" $(AS_BENCH_FLAGS)

# performance-doc writes a benchmark's JSON results into docs/performance.md, replacing the table of
# its block (hack/benchdoc): `make performance-doc BENCH_JSON=bench-results.json` after `make bench`,
# likewise SOAK_OUT's and AS_BENCH_OUT's files; BENCH_BLOCK names another block than the results'.
BENCH_JSON ?=
BENCH_BLOCK ?=
performance-doc:
	@test -n "$(BENCH_JSON)" || { echo "make performance-doc BENCH_JSON=FILE [BENCH_BLOCK=NAME]"; exit 2; }
	go run ./hack/benchdoc -json $(BENCH_JSON) -doc docs/performance.md $(if $(BENCH_BLOCK),-block $(BENCH_BLOCK))

# FLINK=real: real Flink of FLINK_RELEASE (2.3) instead of the simulator, for cluster-up and demo.
FLINK ?= sim
FLINK_RELEASE ?= 2.3
cluster-up:
	FLINK=$(FLINK) FLINK_RELEASE=$(FLINK_RELEASE) ./hack/cluster-up.sh

cluster-down:
	./hack/cluster-down.sh

demo:
	FLINK=$(FLINK) FLINK_RELEASE=$(FLINK_RELEASE) ./hack/demo.sh

k8s-binaries:
	./hack/build-k8s-binaries.sh

# Real Flink (issue 56): each release of FLINK_VERSIONS (a minor version takes its newest patch
# release) unpacked once from PyPI's apache-flink-libraries into $(FLINKFSM_CACHE)/flink, and the
# test job of integ/flinkjob built against each with Maven into $(FLINKFSM_CACHE)/flinkjob. Both are
# kept: a second run does nothing. test-flink runs the real-Flink tests of integ/realflink on them,
# among them the operator on the local cluster with real Flink behind it (realflink.Fleet).
FLINK_VERSIONS ?= 1.20 2.3
flink-dist:
	./hack/flink-dist.sh $(FLINK_VERSIONS)

flinkjob: flink-dist
	./hack/flinkjob.sh $(FLINK_VERSIONS)

test-flink: flinkjob k8s-binaries
	FLINKFSM_REAL_FLINK="$(FLINK_VERSIONS)" go test -count=1 -timeout 45m -v ./integ/realflink/...

# flink-smoke is real Flink's part of `make test`: on the current release (SMOKE_FLINK), the operator
# deploys Lyft's manifest on real JobManagers and TaskManagers, upgrades it with a savepoint whose new
# job goes on with exactly the state it held, and deletes it (about two minutes once the release and
# the test job are cached; the first run downloads and builds them).
SMOKE_FLINK ?= 2.3
flink-smoke: k8s-binaries
	./hack/flink-dist.sh $(SMOKE_FLINK) >/dev/null
	./hack/flinkjob.sh $(SMOKE_FLINK) >/dev/null
	FLINKFSM_REAL_FLINK="$(SMOKE_FLINK)" go test -count=1 -timeout 15m -run '^TestALyftApplicationIsDeployedUpgradedAndDeletedOnRealFlink$$' ./integ/realflink/

# helm, built once from the Go module proxy into $(FLINKFSM_CACHE) (hack/helm.sh runs it).
helm:
	@./hack/helm.sh --path >/dev/null

# helm-template prints what the chart installs: `make helm-template HELM_FLAGS="--set rbac.scope=namespaced --set rbac.watchNamespaces={jobs}"`.
HELM_RELEASE ?= flinkfsm
HELM_NAMESPACE ?= flinkfsm-system
helm-template: helm
	@./hack/helm.sh template $(HELM_RELEASE) deploy/helm/flinkfsm --namespace $(HELM_NAMESPACE) --include-crds $(HELM_FLAGS)

clean:
	rm -rf bin .local dist
