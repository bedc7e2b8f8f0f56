#!/usr/bin/env bash
# Makes Debian's Chromium available (the browser tests drive it headless with playwright-core) and
# prints its path on the last line of stdout (scripts/debian-tool.sh). CHROMIUM_BIN overrides the lookup.
set -euo pipefail

if [ -n "${CHROMIUM_BIN:-}" ]; then
  if [ -x "$CHROMIUM_BIN" ]; then
    echo "$CHROMIUM_BIN"
    exit 0
  fi
  echo "CHROMIUM_BIN=$CHROMIUM_BIN is not an executable file" >&2
  exit 1
fi
DEBIAN_TOOL_HINT=" or set CHROMIUM_BIN" exec bash "$(dirname "${BASH_SOURCE[0]}")/debian-tool.sh" chromium
