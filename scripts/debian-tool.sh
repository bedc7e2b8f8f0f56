#!/usr/bin/env bash
# Usage: debian-tool.sh COMMAND [PACKAGE]. Makes Debian's PACKAGE (default: COMMAND) available and
# prints COMMAND's path on the last line of stdout. Idempotent: an installed command costs nothing.
# Installs with apt-get when run as root (running `apt-get update` only when the package index has no
# candidate); otherwise exits non-zero saying what to install.
set -euo pipefail
PATH="$PATH:/usr/sbin:/usr/bin:/sbin:/bin"
command_name="$1"
package="${2:-$1}"

found="$(command -v "$command_name" || true)"
if [ -n "$found" ]; then
  echo "$found"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "$command_name not found: install it (Debian: apt-get install $package)${DEBIAN_TOOL_HINT:-}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
fi
# A package may start a system service where an init system runs; the tests start their own.
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$package" >&2
command -v "$command_name"
