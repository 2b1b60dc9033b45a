#!/usr/bin/env bash
# Runs helm at a pinned version, building it from the Go module proxy the first time (a few minutes
# on 2 cores) into the same cache as the Kubernetes binaries. Nothing is downloaded outside the
# module proxy, and helm stays out of the project's go.mod: it is built in a throwaway wrapper
# module, the way hack/build-k8s-binaries.sh builds Kubernetes.
#   hack/helm.sh template deploy/helm/flinkfsm
#   hack/helm.sh --path     prints the binary's path (building it if needed) and runs nothing
#   hack/helm.sh --where    prints where the binary is or would be, building nothing
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
CACHE=${FLINKFSM_CACHE:-$HOME/.cache/flinkfsm}
BIN=$CACHE/bin/helm-$HELM_VERSION
if [ "${1:-}" = "--where" ]; then echo "$BIN"; exit 0; fi

if [ ! -x "$BIN" ]; then
  log() { printf '[helm] %s\n' "$*" >&2; }
  export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
  wrap=$CACHE/src/helm-$HELM_VERSION
  mkdir -p "$CACHE/bin"
  # One builder at a time: verify and the tests may both ask for helm on a fresh machine.
  exec 9>"$CACHE/.helm-$HELM_VERSION.lock"
  flock 9
  if [ ! -x "$BIN" ]; then
    if [ ! -f "$wrap/.ready" ]; then
      log "preparing wrapper module for helm.sh/helm/v3 $HELM_VERSION"
      rm -rf "$wrap"; mkdir -p "$wrap"
      cat > "$wrap/go.mod" <<MOD
module flinkfsm.local/helm

go 1.26

require helm.sh/helm/v3 $HELM_VERSION
MOD
      cat > "$wrap/tools.go" <<'GO'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO
      (cd "$wrap" && go mod tidy)
      touch "$wrap/.ready"
    fi
    log "building helm $HELM_VERSION (a few minutes on 2 cores, once)"
    # The variables helm's own Makefile sets: its version (the module proxy's copy has no git
    # metadata), and the Kubernetes version that `helm template` and `helm lint` assume, which the
    # Makefile derives from client-go (v0.N means 1.N).
    cg=$(cd "$wrap" && go list -m -f '{{.Version}}' k8s.io/client-go)
    kminor=${cg#v0.}; kminor=${kminor%%.*}
    ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
    for p in pkg/lint/rules pkg/chartutil; do
      ld="$ld -X helm.sh/helm/v3/$p.k8sVersionMajor=1 -X helm.sh/helm/v3/$p.k8sVersionMinor=$kminor"
    done
    (cd "$wrap" && go build -trimpath -ldflags "$ld" -o "$BIN.tmp" helm.sh/helm/v3/cmd/helm)
    mv "$BIN.tmp" "$BIN"
  fi
  exec 9>&-
fi
if [ "${1:-}" = "--path" ]; then echo "$BIN"; exit 0; fi
# Keep helm's own state (repositories, cache, plugins) out of the user's home directory.
export HELM_CACHE_HOME=${HELM_CACHE_HOME:-$CACHE/helm-home/cache}
export HELM_CONFIG_HOME=${HELM_CONFIG_HOME:-$CACHE/helm-home/config}
export HELM_DATA_HOME=${HELM_DATA_HOME:-$CACHE/helm-home/data}
exec "$BIN" "$@"
