#!/usr/bin/env bash
# Installs the benchmark peers when they are missing: nats-server (NATS
# JetStream) and redis-server (Redis Streams) from Debian packages (issue 8),
# and Apache Kafka (issue 19): the jars of bench/peers/kafka/pom.xml (Kafka's
# broker, KRaft, storage tool, client and perf tools, pinned) fetched by
# `mvn dependency:copy-dependencies` — from ~/.m2 when they are there, from
# Maven Central otherwise — into node_modules/.cache/sluice-interop/kafka-broker/lib
# (the same directory the interop tests' `interop-tools.sh --kafka-broker`
# fills), and the suite's Java driver (bench/peers/kafka/java) compiled
# against them into .../kafka-broker/bench-classes.
# A peer that cannot be installed is skipped with a "skipping <peer>: <why>"
# line; the script still exits 0, and the suite runs without that peer.
# Uses sudo only when not root (non-interactively when there is no terminal).
#
# Usage: scripts/bench-peers.sh        (what `make bench-peers` runs)
set -u

export DEBIAN_FRONTEND=noninteractive
SBIN_DIRS="/usr/local/sbin:/usr/sbin:/sbin"

# The binary's path (PATH first, then the sbin dirs Debian installs servers into), or nothing.
find_binary() {
  PATH="$PATH:$SBIN_DIRS" command -v "$1" 2>/dev/null
}

# The command prefix that runs apt-get as root, or a reason on stderr and status 1.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    return 0
  fi
  if ! command -v sudo >/dev/null 2>&1; then
    echo "not root and sudo is not installed" >&2
    return 1
  fi
  if [ -t 0 ]; then
    echo "sudo"
  else
    echo "sudo -n"
  fi
}

APT_UPDATED=0

# install_peer <peer name> <binary> <package>
install_peer() {
  local peer="$1" binary="$2" package="$3" path prefix log
  if path="$(find_binary "$binary")"; then
    echo "$peer: $binary present at $path ($("$path" --version 2>&1 | head -n 1))"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "skipping $peer: $binary is missing and apt-get is not available (install the $package package yourself)"
    return 0
  fi
  if ! prefix="$(as_root 2>&1)"; then
    echo "skipping $peer: $binary is missing and cannot install $package: $prefix"
    return 0
  fi
  log="$(mktemp)"
  echo "$peer: installing $package with apt-get ..."
  if ! $prefix apt-get install -y -q "$package" >"$log" 2>&1; then
    # A stale package index is the usual cause: refresh it once and retry.
    if [ "$APT_UPDATED" -eq 0 ]; then
      APT_UPDATED=1
      $prefix apt-get update -q >>"$log" 2>&1 || true
    fi
    if ! $prefix apt-get install -y -q "$package" >>"$log" 2>&1; then
      echo "skipping $peer: apt-get install $package failed: $(tail -n 1 "$log")"
      rm -f "$log"
      return 0
    fi
  fi
  rm -f "$log"
  if path="$(find_binary "$binary")"; then
    echo "$peer: installed $binary at $path ($("$path" --version 2>&1 | head -n 1))"
  else
    echo "skipping $peer: $package installed but $binary is still not found"
  fi
  return 0
}

# ------------------------------------------------------------------ Apache Kafka
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
KAFKA_DIR="${SLUICE_INTEROP_CACHE:-$ROOT/node_modules/.cache/sluice-interop}/kafka-broker"
KAFKA_POM="$ROOT/bench/peers/kafka/pom.xml"
DRIVER_SRC="$ROOT/bench/peers/kafka/java/src"
STEP_TIMEOUT_S="${BENCH_PEERS_STEP_TIMEOUT_S:-900}"

# A hash of the given files' contents (as scripts/interop-tools.sh computes its stamps).
inputs_hash() {
  cat "$@" 2>/dev/null | sha256sum | cut -c1-16
}

# The first error line of a Maven or javac log (else its last line), for a skip reason.
first_error() {
  { grep -m 1 -E 'ERROR|error:' "$1" || grep -v '^\s*$' "$1" | tail -n 1; } | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300
}

install_kafka() {
  local stamp log tool
  for tool in java javac mvn; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "skipping Apache Kafka: $tool not found (a JDK 17+ and Maven are needed)"
      return 0
    fi
  done
  log="$(mktemp)"
  stamp="$(inputs_hash "$KAFKA_POM")"
  if [ "$(cat "$KAFKA_DIR/lib/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$KAFKA_DIR/lib"
    echo "Apache Kafka: fetching the jars of bench/peers/kafka/pom.xml with Maven ..."
    # Offline first (everything may be in ~/.m2 already), then from Maven Central.
    if ! timeout "$STEP_TIMEOUT_S" mvn -o -q -B -f "$KAFKA_POM" dependency:copy-dependencies -DoutputDirectory="$KAFKA_DIR/lib" >"$log" 2>&1 \
      && ! timeout "$STEP_TIMEOUT_S" mvn -q -B -f "$KAFKA_POM" dependency:copy-dependencies -DoutputDirectory="$KAFKA_DIR/lib" >"$log" 2>&1; then
      echo "skipping Apache Kafka: Maven could not fetch the jars (is Maven Central reachable?): $(first_error "$log")"
      rm -rf "$KAFKA_DIR/lib" "$log"
      return 0
    fi
    echo "$stamp" >"$KAFKA_DIR/lib/.stamp"
  fi
  stamp="$(inputs_hash "$KAFKA_POM" $(find "$DRIVER_SRC" -name '*.java' | sort))"
  if [ "$(cat "$KAFKA_DIR/bench-classes/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$KAFKA_DIR/bench-classes"
    mkdir -p "$KAFKA_DIR/bench-classes"
    if ! timeout "$STEP_TIMEOUT_S" javac -d "$KAFKA_DIR/bench-classes" -cp "$KAFKA_DIR/lib/*" $(find "$DRIVER_SRC" -name '*.java') >"$log" 2>&1; then
      echo "skipping Apache Kafka: javac of the driver failed: $(first_error "$log")"
      rm -rf "$KAFKA_DIR/bench-classes" "$log"
      return 0
    fi
    echo "$stamp" >"$KAFKA_DIR/bench-classes/.stamp"
  fi
  rm -f "$log"
  echo "Apache Kafka: ready in $KAFKA_DIR ($(ls "$KAFKA_DIR/lib" | grep -E '^kafka_2\.13-' | sed 's/\.jar$//'), driver compiled; java $(java -version 2>&1 | head -n 1 | sed 's/.*"\(.*\)".*/\1/'))"
}

install_peer "NATS JetStream" nats-server nats-server
install_peer "Redis Streams" redis-server redis-server
install_kafka

exit 0
