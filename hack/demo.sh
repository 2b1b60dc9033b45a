#!/usr/bin/env bash
# The operator's main job on the local cluster: deploy examples/wordcount.yaml, watch it reach Running,
# then change its image and watch the savepoint-based Dual upgrade, then suspend it and resume it.
# FLINK=real does the same on real Flink 2.3 JobManagers and TaskManagers with
# examples/real-flink.yaml, a stateful job whose upgrade changes its parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
FLINK=${FLINK:-sim}
FLINK=$FLINK ./hack/cluster-up.sh
export KUBECONFIG=$PWD/.local/kubeconfig
KUBECTL="$(./hack/build-k8s-binaries.sh)/kubectl"
if [ "$FLINK" = real ]; then
  APP=stateful-counter MANIFEST=examples/real-flink.yaml UPGRADE='{"parallelism":3}'
  $KUBECTL create namespace flink-demo 2>/dev/null || true
  $KUBECTL annotate --overwrite namespace flink-demo flinkfsm.io/allow-host-path=true >/dev/null
  KUBECTL="$KUBECTL -n flink-demo"
else
  APP=wordcount-operator-example MANIFEST=examples/wordcount.yaml UPGRADE='{"image":"docker.io/lyft/wordcount-operator-example:v2"}'
fi

watch_until() { # watch_until PHASE DEADLINE_SECONDS
  local want=$1 last="" phase
  for _ in $(seq 1 $(( $2 * 4 ))); do
    phase=$($KUBECTL get flinkapp "$APP" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    if [ "$phase" != "$last" ]; then
      printf '  %s  phase %-16s %s\n' "$(date +%T)" "$phase" "$($KUBECTL get flinkapp "$APP" -o jsonpath='{.status.reason}' 2>/dev/null)"
      last=$phase
    fi
    [ "$phase" = "$want" ] && return 0
    [ "$phase" = "DeployFailed" ] && { echo "deploy failed"; return 1; }
    sleep 0.25
  done
  echo "timed out waiting for $want"; return 1
}

field() { $KUBECTL get flinkapp "$APP" -o jsonpath="{$1}"; }

patch_spec() { # patch_spec JSON: patches the spec and waits until the application leaves its phase
  local from; from=$(field .status.phase)
  $KUBECTL patch flinkapp "$APP" --type merge -p "{\"spec\":$1}"
  for _ in $(seq 1 20); do [ "$(field .status.phase)" != "$from" ] && break; sleep 0.25; done
}

echo "== deploying $MANIFEST"
$KUBECTL apply -f "$MANIFEST"
watch_until Running 120
$KUBECTL get flinkapp "$APP"
old_job=$(field .status.jobStatus.jobID)

echo "== updating $UPGRADE: savepoint, new cluster, new job from the savepoint"
patch_spec "$UPGRADE"
watch_until Running 180
new_job=$(field .status.jobStatus.jobID)
restored=$(field .status.jobStatus.restorePath)
echo "   old job $old_job -> new job $new_job, restored from $restored"
[ -n "$restored" ] || { echo "the upgrade did not restore from a savepoint"; exit 1; }

echo "== suspending: savepoint, cluster deleted, state recorded"
patch_spec '{"state":"Suspended"}'
watch_until Suspended 120
suspended_at=$(field .status.savepointPath)
echo "== resuming from $suspended_at"
patch_spec '{"state":"Running"}'
watch_until Running 180
resumed=$(field .status.jobStatus.restorePath)
echo "   resumed job restored from $resumed"
[ -n "$resumed" ] && [ "$resumed" = "$suspended_at" ] || { echo "the resumed job did not restore the suspended state"; exit 1; }
$KUBECTL get flinkapp,deployments
echo
echo "== kubectl flink status $APP"
go build -o bin/kubectl-flink ./cmd/kubectl-flink
if [ "$FLINK" = real ]; then bin/kubectl-flink -n flink-demo status "$APP"; else bin/kubectl-flink status "$APP"; fi
echo
echo "Events:"; $KUBECTL get events --field-selector involvedObject.kind=FlinkApplication --sort-by=.lastTimestamp \
  -o custom-columns=REASON:.reason,MESSAGE:.message | tail -20
echo
echo "The local environment keeps running (make cluster-down stops it). To use it:"
echo "export KUBECONFIG=$KUBECONFIG"
