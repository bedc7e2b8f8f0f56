#!/usr/bin/env bash
# Makes Debian's redis-server available (the shared rate-limit store's tests start a real one) and
# prints its path on the last line. Idempotent: an installed redis-server costs nothing. Installs with
# apt-get when run as root (running `apt-get update` only when the package index has no candidate);
# otherwise exits non-zero saying what to install.
set -euo pipefail

found="$(command -v redis-server || true)"
if [ -n "$found" ]; then
  echo "$found"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "redis-server not found: install it (Debian/Ubuntu: apt-get install redis-server)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy redis-server 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  apt-get update -qq >&2
fi
apt-get install -y -qq --no-install-recommends redis-server >&2
# The package starts a system service where an init system runs; the tests start their own.
command -v redis-server
