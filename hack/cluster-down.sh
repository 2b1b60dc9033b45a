#!/usr/bin/env bash
# Stops everything cluster-up started: the localenv process group (cluster components, simulator,
# operator all die with it).
set -uo pipefail
cd "$(dirname "$0")/.."
PIDFILE=.local/localenv.pid
[ -f "$PIDFILE" ] || { echo "no local environment running"; exit 0; }
pid=$(cat "$PIDFILE")
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -KILL -- "-$pid" 2>/dev/null || true
fi
rm -f "$PIDFILE" .local/ready
echo "local environment stopped"
