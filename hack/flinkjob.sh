#!/usr/bin/env bash
# Builds the real test job (integ/flinkjob) against each Flink release named, into
# $FLINKFSM_CACHE/flinkjob/<release>/flinkfsm-test-job.jar (default ~/.cache/flinkfsm): never into the
# repository. `hack/flinkjob.sh 1.20 2.3`. A release is named as hack/flink-dist.sh names it and must
# be in its cache already (its VERSION file gives the patch release to compile against). A jar built
# from the same sources is kept: a second run does nothing. Maven's downloads go to its own
# repository (~/.m2).
set -euo pipefail

CACHE=${FLINKFSM_CACHE:-$HOME/.cache/flinkfsm}
SRC=$(cd "$(dirname "$0")/../integ/flinkjob" && pwd)
MVN=${MVN:-mvn}
log() { printf '[flinkjob] %s\n' "$*" >&2; }

[ $# -gt 0 ] || { echo "usage: $0 VERSION... (e.g. 1.20 2.3)" >&2; exit 2; }

# The jar is rebuilt when any source file changes.
digest=$(cd "$SRC" && find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)

for want in "$@"; do
  dist=$CACHE/flink/$want
  [ -f "$dist/VERSION" ] || { log "no Flink $want in $CACHE/flink: run hack/flink-dist.sh $want first"; exit 1; }
  version=$(cat "$dist/VERSION")
  out=$CACHE/flinkjob/$version
  if [ -f "$out/flinkfsm-test-job.jar" ] && [ "$(cat "$out/SOURCE" 2>/dev/null)" = "$digest" ]; then
    echo "$out/flinkfsm-test-job.jar"; continue
  fi
  log "building the test job against Flink $version"
  mkdir -p "$out"
  "$MVN" -q -B -Dstyle.color=never -f "$SRC/pom.xml" package -Dflink.version="$version" -Dflinkjob.out="$out/build" >&2
  cp "$out/build/flinkfsm-test-job.jar" "$out/flinkfsm-test-job.jar.tmp"
  mv "$out/flinkfsm-test-job.jar.tmp" "$out/flinkfsm-test-job.jar"
  echo "$digest" > "$out/SOURCE"
  echo "$out/flinkfsm-test-job.jar"
done
