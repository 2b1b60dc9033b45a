#!/usr/bin/env bash
# Starts the local environment (Kubernetes, Flink simulator, operator) in the background and waits
# until it is ready. State, logs and the kubeconfig go to .local/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.local
mkdir -p "$DIR"
if [ -f "$DIR/localenv.pid" ] && kill -0 "$(cat "$DIR/localenv.pid")" 2>/dev/null; then
  echo "local environment already running: export KUBECONFIG=$PWD/$DIR/kubeconfig"; exit 0
fi
./hack/build-k8s-binaries.sh >/dev/null
go build -o bin/localenv ./integ/cmd/localenv
rm -f "$DIR/ready"
# setsid: the environment gets its own process group, which cluster-down kills as a whole.
setsid nohup bin/localenv --dir "$DIR" >"$DIR/localenv.log" 2>&1 < /dev/null &
echo $! > "$DIR/localenv.pid"
for _ in $(seq 1 600); do
  if [ -f "$DIR/ready" ]; then
    echo "local environment ready (log: $DIR/localenv.log, operator log: $DIR/env/logs/operator.log)"
    echo "export KUBECONFIG=$PWD/$DIR/kubeconfig"
    exit 0
  fi
  if ! kill -0 "$(cat "$DIR/localenv.pid")" 2>/dev/null; then
    echo "local environment failed to start:"; tail -30 "$DIR/localenv.log"; exit 1
  fi
  sleep 0.5
done
echo "local environment not ready after 5 minutes:"; tail -30 "$DIR/localenv.log"; exit 1
