#!/usr/bin/env bash
# Makes Debian's nginx available (the reverse-proxy recipe's test starts a real one in front of the
# gateway) and prints its path on the last line of stdout. Idempotent: an installed nginx costs
# nothing. Installs with apt-get when run as root (running `apt-get update` only when the package index
# has no candidate); otherwise exits non-zero saying what to install.
set -euo pipefail
PATH="$PATH:/usr/sbin:/usr/bin:/sbin:/bin"

found="$(command -v nginx || true)"
if [ -n "$found" ]; then
  echo "$found"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "nginx not found: install it (Debian/Ubuntu: apt-get install nginx)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy nginx 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
fi
# The package may start a system service where an init system runs; the tests start their own.
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends nginx >&2
command -v nginx
