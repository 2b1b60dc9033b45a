#!/usr/bin/env bash
# Runs the randomized explorer (pkg/controller/flinkapplication/explorer_test.go, TestExplorerLong)
# in EXPLORER_PROCS processes side by side, one per core by default, each over seeds of its own
# (EXPLORER_SEED + 1,000,000 × its number) and an equal share of EXPLORER_TOTAL_STEPS, then prints
# each process's summary and the total. Exits non-zero when a process found a violation.
#
# GOGC=400: the explorer's world allocates briefly and much; a less eager collector runs it about a
# third faster, at some tens of megabytes more per process.
set -euo pipefail
cd "$(dirname "$0")/.."
procs=${EXPLORER_PROCS:-$(nproc)}
seed=${EXPLORER_SEED:-10000000}
total=${EXPLORER_TOTAL_STEPS:-10000000}
dir=$(mktemp -d)
# Interrupted, it still says how far each process got (TestExplorerLong prints a line a seed).
progress() {
	for f in "$dir"/out.*; do grep -e '^explorer progress: ' "$f" | tail -1; grep -e '^explorer violation: ' "$f"; done 2>/dev/null || true
}
trap 'progress; rm -rf "$dir"' INT TERM
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/explorer.test" ./pkg/controller/flinkapplication/
pids=()
for i in $(seq 0 $((procs - 1))); do
	EXPLORER_SEED=$((seed + i * 1000000)) EXPLORER_TOTAL_STEPS=$((total / procs)) GOGC=${GOGC:-400} \
		"$dir/explorer.test" -test.run '^TestExplorerLong$' -test.count=1 -test.timeout=0 >"$dir/out.$i" 2>&1 &
	pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || status=1
done
steps=0
for i in $(seq 0 $((procs - 1))); do
	grep -v -e '^[IWE][0-9]\{4\} ' "$dir/out.$i" | grep -e '^explorer: ' -e '^explorer violation: ' -e '^  seed ' -e '^--- FAIL' -e '^panic' || true
	n=$(sed -n 's/^explorer: \([0-9]*\) steps.*/\1/p' "$dir/out.$i")
	steps=$((steps + ${n:-0}))
done
echo "explorer total: $steps steps in $procs processes"
if [ "$status" != 0 ]; then
	# The whole output of a failing process: its violations' traces.
	for i in $(seq 0 $((procs - 1))); do
		grep -q -e '^--- FAIL' -e '^panic' "$dir/out.$i" && grep -v -e '^[IWE][0-9]\{4\} ' "$dir/out.$i" | tail -400
	done
fi
exit $status
