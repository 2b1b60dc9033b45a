#!/usr/bin/env bash
# Fails when generated code is stale, gofmt would change a file, or go vet complains.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
unformatted=$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; status=1; fi
go vet ./... || status=1
# Regenerate into the tree and compare; the originals are restored either way.
backup=$(mktemp -d)
paths=(pkg/apis/app/v1beta1/zz_generated.deepcopy.go pkg/client deploy/crd docs/state-machine.md deploy/helm/flinkfsm/crds deploy/helm/flinkfsm/files/policy.yaml)
tar -cf "$backup/gen.tar" "${paths[@]}"
./hack/update-codegen.sh >/dev/null
if ! diff -r <(mkdir -p "$backup/old" && tar -xf "$backup/gen.tar" -C "$backup/old" && cd "$backup/old" && find . -type f -exec md5sum {} + | sort -k2) \
             <(find "${paths[@]}" -type f -exec md5sum {} + | sed 's#  #  ./#' | sort -k2) >/dev/null; then
  echo "generated files are stale: run 'make generate' and commit the result"
  diff -r "$backup/old" . --brief 2>/dev/null | grep -E "$(IFS='|'; echo "${paths[*]}")" | head -20 || true
  status=1
fi
rm -rf "${paths[@]}"; tar -xf "$backup/gen.tar"; rm -rf "$backup"
[ $status -eq 0 ] && echo "verify: ok"
exit $status
