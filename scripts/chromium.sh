#!/usr/bin/env bash
# Makes Debian's Chromium available (the browser tests drive it headless with playwright-core) and
# prints its path on the last line of stdout. Idempotent: an installed Chromium costs nothing.
# Installs with apt-get when run as root (running `apt-get update` only when the package index has no
# candidate); otherwise exits non-zero saying what to install. CHROMIUM_BIN overrides the lookup.
set -euo pipefail
PATH="$PATH:/usr/sbin:/usr/bin:/sbin:/bin"

if [ -n "${CHROMIUM_BIN:-}" ]; then
  if [ -x "$CHROMIUM_BIN" ]; then
    echo "$CHROMIUM_BIN"
    exit 0
  fi
  echo "CHROMIUM_BIN=$CHROMIUM_BIN is not an executable file" >&2
  exit 1
fi

found="$(command -v chromium || true)"
if [ -n "$found" ]; then
  echo "$found"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "chromium not found: install it (Debian: apt-get install chromium) or set CHROMIUM_BIN" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy chromium 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
fi
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >&2
command -v chromium
