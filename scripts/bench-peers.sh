#!/usr/bin/env bash
# Installs the benchmark peers (issue 8) from Debian packages when they are
# missing: nats-server (NATS JetStream) and redis-server (Redis Streams).
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

install_peer "NATS JetStream" nats-server nats-server
install_peer "Redis Streams" redis-server redis-server

exit 0
