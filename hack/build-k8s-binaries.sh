#!/usr/bin/env bash
# Builds the real Kubernetes control-plane binaries, kubectl, etcd and kwok from the Go module
# proxy, once per version, into a cache outside the repository. Docker cannot run on our machines,
# so this is how the local cluster gets real parts. Re-running is cheap: finished binaries are kept.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
CACHE=${FLINKFSM_CACHE:-$HOME/.cache/flinkfsm}
OUT=$CACHE/bin/k8s-$K8S_VERSION-kwok-$KWOK_VERSION
STAGING_VERSION=v0.${K8S_VERSION#v1.}

want=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok)
missing=()
for b in "${want[@]}"; do [ -x "$OUT/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then echo "$OUT"; exit 0; fi
mkdir -p "$OUT"

log() { printf '[build-k8s] %s\n' "$*" >&2; }
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

wrap=$CACHE/src/k8s-$K8S_VERSION
if [ ! -f "$wrap/.ready" ]; then
  log "preparing wrapper module for k8s.io/kubernetes $K8S_VERSION (first run downloads a lot)"
  rm -rf "$wrap"; mkdir -p "$wrap/etcd"
  cd "$wrap"
  cat > go.mod <<MOD
module flinkfsm.local/k8sbinaries

go 1.24

require k8s.io/kubernetes $K8S_VERSION
MOD
  go mod download -x k8s.io/kubernetes@"$K8S_VERSION" 2>/dev/null || go mod download k8s.io/kubernetes@"$K8S_VERSION"
  kgomod=$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/go.mod
  # kubernetes points its staging modules at ./staging; a dependent module must name released versions.
  grep -E '^\s*k8s.io/[a-z0-9-]+ => ./staging' "$kgomod" | awk '{print $1}' | sort -u | while read -r m; do
    echo "replace $m => $m $STAGING_VERSION" >> go.mod
  done
  # etcd's own module cannot be `go install`ed (it has replace directives); its etcdmain package can be
  # linked from here at the version kubernetes itself depends on.
  cat > etcd/main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  go mod tidy
  touch .ready
fi
cd "$wrap"
major=${K8S_VERSION#v}; major=${major%%.*}
minor=${K8S_VERSION#v*.}; minor=${minor%%.*}
ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=$major -X k8s.io/client-go/pkg/version.gitMinor=$minor"
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [ -x "$OUT/$b" ] && continue
  log "building $b $K8S_VERSION (minutes on 2 cores)"
  go build -trimpath -ldflags "$ld" -o "$OUT/$b.tmp" "k8s.io/kubernetes/cmd/$b" && mv "$OUT/$b.tmp" "$OUT/$b"
done
if [ ! -x "$OUT/etcd" ]; then
  log "building etcd"
  go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" ./etcd && mv "$OUT/etcd.tmp" "$OUT/etcd"
fi
if [ ! -x "$OUT/kwok" ]; then
  log "building kwok $KWOK_VERSION"
  GOBIN=$OUT/.kwok go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv "$OUT/.kwok/kwok" "$OUT/kwok"; rmdir "$OUT/.kwok"
fi
echo "$OUT"
