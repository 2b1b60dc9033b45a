#!/usr/bin/env bash
# Regenerates deepcopy functions, the typed clientset, listers, informers and the CRD from the API
# types, and deploy/policy.yaml from the pod policy's table. Tools come from go.mod's tool block, so
# everyone generates with the same versions.
set -euo pipefail
cd "$(dirname "$0")/.."
MOD=github.com/flinkfsm/flinkfsm
API=$MOD/pkg/apis/app/v1beta1
HDR=hack/boilerplate.go.txt

go tool deepcopy-gen --go-header-file "$HDR" --output-file zz_generated.deepcopy.go ./pkg/apis/app/v1beta1
rm -rf pkg/client
go tool client-gen --go-header-file "$HDR" --clientset-name versioned --input-base "" --input "$API" \
  --output-dir pkg/client/clientset --output-pkg "$MOD/pkg/client/clientset"
go tool lister-gen --go-header-file "$HDR" --output-dir pkg/client/listers --output-pkg "$MOD/pkg/client/listers" "$API"
go tool informer-gen --go-header-file "$HDR" --versioned-clientset-package "$MOD/pkg/client/clientset/versioned" \
  --listers-package "$MOD/pkg/client/listers" --output-dir pkg/client/informers --output-pkg "$MOD/pkg/client/informers" "$API"
go tool controller-gen crd:crdVersions=v1,maxDescLen=400,allowDangerousTypes=true paths=./pkg/apis/... output:crd:dir=deploy/crd
# What markers cannot say: int32 bounds on the Kubernetes types the spec embeds.
go run ./hack/crdschema deploy/crd/*.yaml
go run ./hack/docgen docs/state-machine.md
# The pod security admission policy, rendered from the table the operator's own check runs.
go run ./hack/podpolicy deploy/policy.yaml
./hack/sync-chart.sh
