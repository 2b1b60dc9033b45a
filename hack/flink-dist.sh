#!/usr/bin/env bash
# Puts a runnable Apache Flink of each release named on the command line into
# $FLINKFSM_CACHE/flink/<version>/ (default ~/.cache/flinkfsm), for the real-Flink tests of
# integ/realflink: `hack/flink-dist.sh 1.20 2.3`. A minor version (1.20) takes its newest patch
# release and is kept as a link to it (flink/1.20 -> 1.20.5); a full one (2.3.0) is taken as it is.
# It prints each release's directory.
#
# Route: PyPI's apache-flink-libraries. Flink's distribution (flink-dist) is not on Maven Central,
# and assembling one from flink-runtime, flink-clients, flink-runtime-web, flink-kubernetes and their
# shaded dependencies would be a distribution of our own making, which could differ from what users
# run. The PyFlink package apache-flink-libraries carries the release's own lib/ (flink-dist, with the
# web monitor that serves /jars and the Kubernetes HA services inside it, the table jars, log4j),
# plugins/ and bin/bash-java-utils.jar (which computes a process's JVM memory flags), byte for byte
# what the binary distribution ships. It lacks bin/*.sh and conf/: integ/realflink starts the JVMs
# itself (the scripts' job) and writes each process's configuration, and conf/ here holds defaults.
#
# Downloads go through pip's own cache (outside the repository). A release already in place is not
# looked up again: a second run touches no network.
set -euo pipefail

CACHE=${FLINKFSM_CACHE:-$HOME/.cache/flinkfsm}
ROOT=$CACHE/flink
PIP=${PIP:-pip}
log() { printf '[flink-dist] %s\n' "$*" >&2; }

[ $# -gt 0 ] || { echo "usage: $0 VERSION... (e.g. 1.20 2.3)" >&2; exit 2; }
mkdir -p "$ROOT"

ready() { [ -f "$ROOT/$1/.ready" ]; }

# Each release in a subshell of its own, so that its download directory goes with it.
install_one() (
  local want=$1 spec
  case $want in
    [0-9]*.[0-9]*.[0-9]*) spec="==$want" ;;
    [0-9]*.[0-9]*) spec="==$want.*" ;;
    *) log "not a Flink version: $want"; return 2 ;;
  esac
  if ready "$want"; then echo "$ROOT/$want"; return 0; fi

  local tmp; tmp=$(mktemp -d "$ROOT/.download.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  log "resolving apache-flink-libraries$spec on PyPI"
  # --no-deps: only the jars; pip prepares the sdist's metadata, which takes a few seconds.
  if ! "$PIP" download --quiet --no-deps "apache-flink-libraries$spec" -d "$tmp" >&2; then
    log "apache-flink-libraries$spec does not resolve"; return 1
  fi
  # 1.x and early 2.x releases are sdists with the jars under deps/; later ones are wheels with
  # them under pyflink/.
  local archive version
  archive=$(ls "$tmp"/apache_flink_libraries-*.tar.gz "$tmp"/apache_flink_libraries-*.whl 2>/dev/null | head -1)
  [ -n "$archive" ] || { log "apache-flink-libraries$spec gave neither an sdist nor a wheel"; return 1; }
  version=$(basename "$archive"); version=${version#apache_flink_libraries-}
  version=${version%.tar.gz}; version=${version%%-py*}

  if ! ready "$version"; then
    log "unpacking Flink $version"
    local stage=$tmp/stage dest=$ROOT/$version top
    mkdir -p "$stage/dist"
    case $archive in
      *.tar.gz)
        top=$stage/apache_flink_libraries-$version/deps
        tar -xzf "$archive" -C "$stage" --wildcards \
          "apache_flink_libraries-$version/deps/lib/*" "apache_flink_libraries-$version/deps/plugins/*" \
          "apache_flink_libraries-$version/deps/bin/*" ;;
      *.whl)
        top=$stage/pyflink
        unzip -q "$archive" 'pyflink/lib/*' 'pyflink/plugins/*' 'pyflink/bin/*' -d "$stage" ;;
    esac
    mv "$top/"{lib,plugins,bin} "$stage/dist/"
    [ -n "$(ls "$stage"/dist/lib/flink-dist*.jar 2>/dev/null)" ] || { log "no flink-dist jar in $version"; return 1; }
    write_conf "$stage/dist/conf"
    echo "$version" > "$stage/dist/VERSION"
    rm -rf "$dest"; mv "$stage/dist" "$dest"
    touch "$dest/.ready"
  fi
  if [ "$want" != "$version" ]; then ln -sfn "$version" "$ROOT/$want"; fi
  echo "$ROOT/$version"
)

# write_conf writes what a cluster takes when nothing else is said: integ/realflink writes every
# process's own config.yaml and reads only the log4j files from here.
write_conf() {
  mkdir -p "$1"
  cat > "$1/config.yaml" <<'YAML'
# Defaults only: integ/realflink writes each JobManager's and TaskManager's own configuration.
jobmanager:
  memory:
    process:
      size: 640m
taskmanager:
  memory:
    process:
      size: 896m
  numberOfTaskSlots: 2
YAML
  cat > "$1/log4j.properties" <<'PROPS'
# One file per process (log.file, set by whoever starts it), as Flink's own log4j.properties.
monitorInterval = 0
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
logger.pekko.name = org.apache.pekko
logger.pekko.level = WARN
logger.akka.name = akka
logger.akka.level = WARN
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = WARN
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
logger.netty.name = org.jboss.netty.channel.DefaultChannelPipeline
logger.netty.level = OFF
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
PROPS
}

status=0
for v in "$@"; do install_one "$v" || status=1; done
exit $status
