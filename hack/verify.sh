#!/usr/bin/env bash
# Fails when generated code is stale, gofmt would change a file, or go vet complains (the autoscaler
# benchmark's build tag too), when a package depends on one its layer may not use (hack/importrule), when a relative link in README.md or docs/ resolves to no file or
# heading, and when the Helm chart fails helm lint or does not render the operator deploy/ does.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
unformatted=$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; status=1; fi
go vet ./... || status=1
# The autoscaler benchmark is behind a build tag; vetting it keeps it compiling as the world changes.
go vet -tags autoscalerbench ./pkg/controller/flinkapplication/ || status=1
# The layering: which of the module's packages each package may depend on (hack/importrule).
go run ./hack/importrule || status=1
# Relative links in the documentation: a moved document or a renamed heading fails here, and so
# does a document docs/README.md does not list.
go run ./hack/doclinks -index docs/README.md README.md docs || status=1
# Regenerate into the tree and compare; the originals are restored either way.
backup=$(mktemp -d)
paths=(pkg/apis/app/v1beta1/zz_generated.deepcopy.go pkg/client deploy/crd docs/state-machine.md deploy/policy.yaml deploy/helm/flinkfsm/crds deploy/helm/flinkfsm/files)
tar -cf "$backup/gen.tar" "${paths[@]}"
./hack/update-codegen.sh >/dev/null
if ! diff -r <(mkdir -p "$backup/old" && tar -xf "$backup/gen.tar" -C "$backup/old" && cd "$backup/old" && find . -type f -exec md5sum {} + | sort -k2) \
             <(find "${paths[@]}" -type f -exec md5sum {} + | sed 's#  #  ./#' | sort -k2) >/dev/null; then
  echo "generated files are stale: run 'make generate' and commit the result"
  diff -r "$backup/old" . --brief 2>/dev/null | grep -E "$(IFS='|'; echo "${paths[*]}")" | head -20 || true
  status=1
fi
rm -rf "${paths[@]}"; tar -xf "$backup/gen.tar"; rm -rf "$backup"
# The Helm chart: lint, render, and compare with kubectl kustomize deploy/ (deploy/helmtest, which
# needs the cached kubectl and fails rather than skips here).
chart=deploy/helm/flinkfsm
./hack/helm.sh lint --strict "$chart" --namespace flinkfsm-system >/dev/null || { ./hack/helm.sh lint --strict "$chart"; status=1; }
./hack/helm.sh template flinkfsm "$chart" --namespace flinkfsm-system --include-crds >/dev/null || status=1
if ! out=$(FLINKFSM_REQUIRE_CLUSTER=1 go test -count=1 ./deploy/helmtest/ 2>&1); then
  echo "the Helm chart fails its checks against deploy/ (go test ./deploy/helmtest/):"
  echo "$out" | tail -40
  status=1
fi
[ $status -eq 0 ] && echo "verify: ok"
exit $status
