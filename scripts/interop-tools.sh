#!/usr/bin/env bash
# Installs the Kafka clients and tools that the interop tests (test/interop/,
# issue 14) drive against Sluice's Kafka listener:
#   kcat          Debian's kcat package (kafkacat on older releases)
#   chromium      Debian's chromium package, for the browser tests (test/browser/)
#   java          kafka-clients + kafka-tools jars from Maven Central
#                 (test/interop/java/pom.xml) and the Interop program compiled
#                 against them with javac
#   franz-go      test/interop/franz built with `go build`
#   confluent-kafka  a Python venv with confluent-kafka (its wheel bundles librdkafka)
#   kafkajs       an npm devDependency: `npm ci` installs it; only reported here
# and, with --kafka-broker, Apache Kafka's broker jars (bench/peers/kafka/pom.xml)
# for running the same tests against a real Kafka (SLUICE_INTEROP_TARGET=kafka,
# see docs/development.md); the benchmark peers use them too.
# Everything but kcat goes to the cache dir (SLUICE_INTEROP_CACHE, default
# node_modules/.cache/sluice-interop), where test/interop/kafka-kit.ts looks.
# A tool that is already there, built from the same inputs, is left alone.
#
# Like scripts/bench-peers.sh this never fails: a tool it cannot get is
# skipped with a "skipping <tool>: <why>" line, the script exits 0, and the
# tests of that tool skip with the same reason. Each step has its own time
# bound (INTEROP_STEP_TIMEOUT_S, default 600 s) so a hung download cannot hold
# up `make test`.
#
# Usage: scripts/interop-tools.sh                  (what `make test` and .ci/run run)
#        scripts/interop-tools.sh --kafka-broker   (also the Kafka broker jars)
set -u
WITH_KAFKA_BROKER=0
for arg in "$@"; do
  case "$arg" in
    --kafka-broker) WITH_KAFKA_BROKER=1 ;;
    *) echo "interop-tools.sh: unknown argument $arg (ignored)" ;;
  esac
done

cd "$(dirname "$0")/.."
ROOT="$(pwd)"
export DEBIAN_FRONTEND=noninteractive
CACHE="${SLUICE_INTEROP_CACHE:-$ROOT/node_modules/.cache/sluice-interop}"
STEP_TIMEOUT_S="${INTEROP_STEP_TIMEOUT_S:-600}"
CONFLUENT_KAFKA_VERSION="2.16.1"
mkdir -p "$CACHE" || { echo "skipping every interop tool: cannot create $CACHE"; exit 0; }

# A hash of the given files' contents (the stamp that says a cached build is current).
inputs_hash() {
  cat "$@" 2>/dev/null | sha256sum | cut -c1-16
}

# The last line of a log file, for a skip reason.
last_line() {
  grep -v '^\s*$' "$1" | tail -n 1 | cut -c1-300
}

# ------------------------------------------------------------------ Debian packages
# apt_tool LABEL "BINARIES" "PACKAGES": the first of BINARIES on the PATH, or
# else the first of PACKAGES that apt-get installs (retried once after an
# index refresh); a skip line when neither works.
apt_tool() {
  local label="$1" bins="$2" pkgs="$3" path log prefix="" pkg b
  for b in $bins; do
    if path="$(command -v "$b")"; then
      echo "$label: present at $path"
      return 0
    fi
  done
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "skipping $label: not installed and apt-get is not available (install the $pkgs package yourself)"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "skipping $label: not installed, not root and sudo is not installed"
      return 0
    fi
    prefix="sudo -n"
  fi
  log="$(mktemp)"
  for pkg in $pkgs; do
    echo "$label: installing $pkg with apt-get ..."
    if timeout "$STEP_TIMEOUT_S" $prefix apt-get install -y -q "$pkg" >"$log" 2>&1; then break; fi
    # A stale package index is the usual cause: refresh it once and retry.
    timeout "$STEP_TIMEOUT_S" $prefix apt-get update -q >>"$log" 2>&1 || true
    if timeout "$STEP_TIMEOUT_S" $prefix apt-get install -y -q "$pkg" >>"$log" 2>&1; then break; fi
  done
  for b in $bins; do
    if path="$(command -v "$b")"; then
      echo "$label: installed at $path"
      rm -f "$log"
      return 0
    fi
  done
  echo "skipping $label: apt-get install $pkgs failed: $(last_line "$log")"
  rm -f "$log"
}

# kcat is the package's name since Debian 12; older releases call it kafkacat.
install_kcat() { apt_tool kcat "kcat kafkacat" "kcat kafkacat"; }

# Debian's Chromium for the browser tests (test/browser/, driven by
# playwright-core: no browser download).
install_chromium() { apt_tool chromium "chromium" "chromium"; }

# ------------------------------------------------------------------ Java client and Kafka's tools
install_java() {
  local dir="$CACHE/java" src="$ROOT/test/interop/java" log stamp
  if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
    echo "skipping java: java/javac not found (a JDK 17+ is needed)"
    return 0
  fi
  log="$(mktemp)"
  stamp="$(inputs_hash "$src/pom.xml")"
  if [ "$(cat "$dir/lib/.stamp" 2>/dev/null)" != "$stamp" ]; then
    if ! command -v mvn >/dev/null 2>&1; then
      echo "skipping java: mvn not found (Maven fetches the kafka-clients and kafka-tools jars)"
      rm -f "$log"
      return 0
    fi
    echo "java: fetching kafka-clients and kafka-tools with Maven ..."
    rm -rf "$dir/lib"
    if ! timeout "$STEP_TIMEOUT_S" mvn -q -B -f "$src/pom.xml" dependency:copy-dependencies \
        -DoutputDirectory="$dir/lib" >"$log" 2>&1; then
      echo "skipping java: mvn dependency:copy-dependencies failed: $(last_line "$log")"
      rm -rf "$dir/lib" "$log"
      return 0
    fi
    echo "$stamp" >"$dir/lib/.stamp"
  fi
  stamp="$(inputs_hash "$src/pom.xml" $(find "$src/src" -name '*.java' | sort))"
  if [ "$(cat "$dir/classes/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$dir/classes"
    mkdir -p "$dir/classes"
    if ! timeout "$STEP_TIMEOUT_S" javac -d "$dir/classes" -cp "$dir/lib/*" $(find "$src/src" -name '*.java') >"$log" 2>&1; then
      echo "skipping java: javac failed: $(last_line "$log")"
      rm -rf "$dir/classes" "$log"
      return 0
    fi
    echo "$stamp" >"$dir/classes/.stamp"
  fi
  rm -f "$log"
  echo "java: ready in $dir ($(ls "$dir/lib" | grep -E '^kafka-(clients|tools)-' | tr '\n' ' '))"
}

# ------------------------------------------------------------------ Apache Kafka's broker (opt-in)
install_kafka_broker() {
  local dir="$CACHE/kafka-broker" pom="$ROOT/bench/peers/kafka/pom.xml" log stamp
  stamp="$(inputs_hash "$pom")"
  if [ "$(cat "$dir/lib/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "kafka broker: ready in $dir/lib"
    return 0
  fi
  if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
    echo "skipping kafka broker: mvn or java not found"
    return 0
  fi
  log="$(mktemp)"
  echo "kafka broker: fetching kafka_2.13 with Maven ..."
  rm -rf "$dir/lib"
  if ! timeout "$STEP_TIMEOUT_S" mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir/lib" >"$log" 2>&1; then
    echo "skipping kafka broker: mvn dependency:copy-dependencies failed: $(last_line "$log")"
    rm -rf "$dir/lib" "$log"
    return 0
  fi
  echo "$stamp" >"$dir/lib/.stamp"
  rm -f "$log"
  echo "kafka broker: ready in $dir/lib ($(ls "$dir/lib" | grep -E '^kafka_2\.13-' | tr '\n' ' '))"
}

# ------------------------------------------------------------------ franz-go
install_franz() {
  local dir="$CACHE/franz" src="$ROOT/test/interop/franz" log stamp
  if ! command -v go >/dev/null 2>&1; then
    echo "skipping franz-go: go not found"
    return 0
  fi
  stamp="$(inputs_hash "$src/go.mod" "$src/go.sum" "$src/main.go")"
  if [ -x "$dir/franz-interop" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "franz-go: ready at $dir/franz-interop"
    return 0
  fi
  mkdir -p "$dir"
  log="$(mktemp)"
  echo "franz-go: building test/interop/franz ..."
  # GOTOOLCHAIN=local: use the Go on the machine, never download another one.
  if ! (cd "$src" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly timeout "$STEP_TIMEOUT_S" go build -o "$dir/franz-interop" .) >"$log" 2>&1; then
    echo "skipping franz-go: go build failed: $(last_line "$log")"
    rm -f "$log" "$dir/franz-interop"
    return 0
  fi
  echo "$stamp" >"$dir/.stamp"
  rm -f "$log"
  echo "franz-go: built $dir/franz-interop"
}

# ------------------------------------------------------------------ confluent-kafka (Python)
install_python() {
  local venv="$CACHE/python-venv" log
  if ! command -v python3 >/dev/null 2>&1; then
    echo "skipping confluent-kafka: python3 not found"
    return 0
  fi
  if [ "$(cat "$venv/.stamp" 2>/dev/null)" = "$CONFLUENT_KAFKA_VERSION" ] && "$venv/bin/python" -c 'import confluent_kafka' >/dev/null 2>&1; then
    echo "confluent-kafka: ready in $venv"
    return 0
  fi
  log="$(mktemp)"
  rm -rf "$venv"
  echo "confluent-kafka: installing $CONFLUENT_KAFKA_VERSION into a venv ..."
  if ! timeout "$STEP_TIMEOUT_S" python3 -m venv "$venv" >"$log" 2>&1; then
    echo "skipping confluent-kafka: python3 -m venv failed (Debian: the python3-venv package): $(last_line "$log")"
    rm -rf "$venv" "$log"
    return 0
  fi
  if ! timeout "$STEP_TIMEOUT_S" "$venv/bin/pip" install -q --disable-pip-version-check "confluent-kafka==$CONFLUENT_KAFKA_VERSION" >"$log" 2>&1; then
    echo "skipping confluent-kafka: pip install failed: $(last_line "$log")"
    rm -rf "$venv" "$log"
    return 0
  fi
  echo "$CONFLUENT_KAFKA_VERSION" >"$venv/.stamp"
  rm -f "$log"
  echo "confluent-kafka: installed $("$venv/bin/python" -c 'import confluent_kafka as c; print(c.version(), "with librdkafka", c.libversion()[0])')"
}

# ------------------------------------------------------------------ KafkaJS
report_kafkajs() {
  if [ -f "$ROOT/node_modules/kafkajs/package.json" ]; then
    echo "kafkajs: $(node -p "require('$ROOT/node_modules/kafkajs/package.json').version" 2>/dev/null) (npm devDependency)"
  else
    echo "skipping kafkajs: not in node_modules (run make install: it is a devDependency)"
  fi
}

install_kcat
install_chromium
install_java
install_franz
install_python
report_kafkajs
if [ "$WITH_KAFKA_BROKER" -eq 1 ]; then install_kafka_broker; fi
exit 0
