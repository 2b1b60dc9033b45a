#!/usr/bin/env bash
# Starts the local environment (Kubernetes, Flink simulator, operator) in the background and waits
# until it is ready. State, logs and the kubeconfig go to .local/ (git-ignored). FLINK=real runs real
# Flink of FLINK_RELEASE (2.3) instead of the simulator, installed into the cache first.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.local
mkdir -p "$DIR"
FLINK=${FLINK:-sim}
FLINK_RELEASE=${FLINK_RELEASE:-2.3}
if [ -f "$DIR/localenv.pid" ] && kill -0 "$(cat "$DIR/localenv.pid")" 2>/dev/null; then
  running=$(cat "$DIR/flink" 2>/dev/null || echo sim)
  if [ "$running" != "$FLINK" ]; then
    echo "a local environment with FLINK=$running is running: make cluster-down first"; exit 1
  fi
  echo "local environment already running: export KUBECONFIG=$PWD/$DIR/kubeconfig"; exit 0
fi
./hack/build-k8s-binaries.sh >/dev/null
if [ "$FLINK" = real ]; then
  ./hack/flink-dist.sh "$FLINK_RELEASE" >/dev/null
  ./hack/flinkjob.sh "$FLINK_RELEASE" >/dev/null
fi
go build -o bin/localenv ./integ/cmd/localenv
rm -f "$DIR/ready"
# setsid: the environment gets its own process group, which cluster-down kills as a whole.
setsid nohup bin/localenv --dir "$DIR" --flink "$FLINK" --flink-releases "$FLINK_RELEASE" >"$DIR/localenv.log" 2>&1 < /dev/null &
echo $! > "$DIR/localenv.pid"
echo "$FLINK" > "$DIR/flink"
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
